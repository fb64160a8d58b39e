//! `#[wymcp::tool]` on an `impl` block: each `async fn` is an action, and the block's type
//! implements `wymcp::ActionTool`.
//!
//! An action's name is the method's, its description the first paragraph of its doc comment
//! (later paragraphs the notes), its `data` the method's parameters (or one `Params<T>`), its
//! extras the method's `#[wymcp(...)]`. Everything known at compile time goes through the
//! runtime's chain here, and a refusal points at the token that wrote it.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use serde_json::Value;
use syn::spanned::Spanned;
use syn::{ImplItem, ImplItemFn, ItemImpl, ReturnType, Type};
use wymcp_core::{ConfigurationError, Problem};

use crate::action_names;
use crate::attrs;
use crate::companions::{self, Companion};
use crate::forwarded::forward;
use crate::json::Node;
use crate::locate;
use crate::params::{self, Param, Property};
use crate::typed::{self, Action, Payload, snake_case};

/// The keys `#[wymcp::tool(...)]` accepts.
const TOOL_KEYS: [&str; 2] = ["name", "description"];

/// The `ActionTool` methods a same-named, non-async method of the block provides, with the
/// parameters and return type `ActionTool` gives them.
const FORWARDED: [&str; 6] = [
    "hints",
    "handle_error",
    "output_schema",
    "title",
    "annotations",
    "action_context",
];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut block: ItemImpl = syn::parse2(item)?;
    check_block(&block)?;
    let (name, description) = tool_texts(attr, &block)?;
    let enum_name = action_names::enum_ident(&block.self_ty);
    let read = read_items(&mut block, enum_name.as_ref())?;
    let actions = parse_actions(&block, &read.methods, read.params)?;
    let action_enum = match enum_name.filter(|_| read.typed_enum) {
        Some(enum_name) => {
            let names: Vec<(String, syn::Ident)> = actions
                .iter()
                .map(|a| (a.action.name.clone(), a.method.clone()))
                .collect();
            action_names::definition(&enum_name, &names)
        }
        None => quote!(),
    };
    let declared = actions.iter().map(MethodAction::declaration);
    let arms = actions.iter().map(MethodAction::arm);
    let checks = actions.iter().map(|a| a.action.field_checks());
    let forwarded = &read.forwarded;
    let (companion_items, companions_fn) = companions::expand(&read.companions);
    let self_ty = &block.self_ty;
    Ok(quote! {
        #block

        #action_enum

        #companion_items

        #(#checks)*

        #[automatically_derived]
        impl ::wymcp::ActionTool for #self_ty {
            fn name(&self) -> &str { #name }
            fn description(&self) -> &str { #description }
            fn actions(&self) -> ::wymcp::Actions {
                ::wymcp::Actions::new() #(#declared)*
            }
            async fn run_action(
                &self,
                action: &str,
                data: ::wymcp::Data,
                ctx: ::wymcp::Context,
            ) -> ::wymcp::ActionResult {
                #[allow(unused_mut, unused_variables)]
                let mut __wymcp_data = ::wymcp::__private::data_map(data);
                let _ = &ctx;
                match action {
                    #(#arms)*
                    other => ::core::result::Result::Err(::wymcp::tool::Failure::new(
                        ::wymcp::__private::unknown_action(other),
                    )),
                }
            }
            #(#forwarded)*
            #companions_fn
        }
    })
}

fn check_block(block: &ItemImpl) -> syn::Result<()> {
    if let Some((path, _)) = &block.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "`#[wymcp::tool]` goes on an inherent `impl` block (`impl Notes { ... }`), not on a trait impl",
        ));
    }
    if !block.generics.params.is_empty() {
        return Err(syn::Error::new(
            block.generics.span(),
            "`#[wymcp::tool]` cannot be used on a generic `impl` block",
        ));
    }
    Ok(())
}

/// What the block's items say: the action methods (as written, attributes included) with
/// their parameters, and the `ActionTool` methods the block provides.
struct Items {
    methods: Vec<ImplItemFn>,
    params: Vec<Vec<Param>>,
    forwarded: Vec<TokenStream>,
    /// Whether `hints` or `action_context` takes the action enum.
    typed_enum: bool,
    companions: Vec<Companion>,
}

/// Reads the block's items, removing the attributes and parameter docs that are the
/// attribute's (Rust would refuse them); a `plain` or `prompt` method is a companion.
fn read_items(block: &mut ItemImpl, enum_name: Option<&syn::Ident>) -> syn::Result<Items> {
    let mut items = Items {
        methods: Vec::new(),
        params: Vec::new(),
        forwarded: Vec::new(),
        typed_enum: false,
        companions: Vec::new(),
    };
    let self_ty = &*block.self_ty;
    for item in &mut block.items {
        let ImplItem::Fn(f) = item else { continue };
        if skipped(f) {
            f.attrs.retain(|a| !a.path().is_ident("wymcp"));
        } else if let Some(marker) = companions::marker(f)? {
            items.companions.push(companions::read(self_ty, f, marker)?);
        } else if f.sig.asyncness.is_some() {
            items.methods.push(f.clone());
            f.attrs.retain(|a| !a.path().is_ident("wymcp"));
            let mut read = Vec::new();
            for arg in f.sig.inputs.iter_mut().skip(1) {
                read.push(params::parse(arg)?);
            }
            items.params.push(read);
        } else if FORWARDED.contains(&f.sig.ident.to_string().as_str()) {
            let typed = enum_name
                .filter(|name| f.sig.ident != "handle_error" && action_names::takes_enum(f, name));
            match typed {
                Some(name) => {
                    items.typed_enum = true;
                    items
                        .forwarded
                        .push(action_names::typed_forward(&f.sig.ident, name));
                }
                None => items.forwarded.push(forward(&f.sig.ident)),
            }
        } else if let Some(attr) = f.attrs.iter().find(|a| a.path().is_ident("wymcp")) {
            return Err(syn::Error::new(
                attr.meta.span(),
                "`#[wymcp(...)]` goes on an action, and an action is an `async fn`",
            ));
        }
    }
    Ok(items)
}

/// Each method read as an action and checked, names unique, `related` naming actions.
fn parse_actions<'a>(
    block: &ItemImpl,
    methods: &'a [ImplItemFn],
    params: Vec<Vec<Param>>,
) -> syn::Result<Vec<MethodAction<'a>>> {
    if methods.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "a tool needs at least one action: write an `async fn` in this block",
        ));
    }
    let mut actions: Vec<MethodAction<'a>> = Vec::with_capacity(methods.len());
    for (method, params) in methods.iter().zip(params) {
        let action = MethodAction::parse(method, params)?;
        if actions.iter().any(|a| a.action.name == action.action.name) {
            let error =
                ConfigurationError::new(Problem::DuplicateAction(action.action.name.clone()))
                    .in_action(action.action.name.clone());
            return Err(syn::Error::new(action.action.name_span, error.to_string()));
        }
        actions.push(action);
    }
    crate::cross_checks::check_related(actions.iter().map(|a| &a.action))?;
    Ok(actions)
}

fn skipped(f: &ImplItemFn) -> bool {
    f.attrs.iter().any(|a| {
        a.path().is_ident("wymcp")
            && a.parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "skip")
    })
}

/// The tool's name and description: `#[wymcp::tool(name = "...", description = "...")]`, or
/// the type's name in snake_case and the block's doc comment.
fn tool_texts(attr: TokenStream, block: &ItemImpl) -> syn::Result<(String, String)> {
    let mut name = None;
    let mut description = None;
    let entries = attrs::entries(attr, &TOOL_KEYS).map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("{e} (title, annotations, hints, ... are methods of the block: `fn title(&self) -> Option<String>`)"),
        )
    })?;
    for entry in entries {
        let text = match &entry.value {
            Some(Node::Scalar(Value::String(s), _)) => s.clone(),
            _ => {
                return Err(syn::Error::new(
                    entry.span(),
                    format!("expected `{} = \"...\"`", entry.name()),
                ));
            }
        };
        match entry.name().as_str() {
            "name" => name = Some(text),
            _ => description = Some(text),
        }
    }
    let name = match name {
        Some(name) => name,
        None => match &*block.self_ty {
            Type::Path(path) => path
                .path
                .segments
                .last()
                .map(|s| snake_case(&s.ident.to_string()))
                .unwrap_or_default(),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "name the tool: `#[wymcp::tool(name = \"...\")]`",
                ));
            }
        },
    };
    let description = match description.or_else(|| attrs::doc_text(&block.attrs).map(|d| d.0)) {
        Some(description) => description,
        None => {
            return Err(syn::Error::new(
                block.impl_token.span,
                "a tool needs a description: write a `///` doc comment on the `impl` block, or `#[wymcp::tool(description = \"...\")]`",
            ));
        }
    };
    Ok((name, description))
}

/// One action method, read and checked.
struct MethodAction<'a> {
    action: Action<'a>,
    method: &'a syn::Ident,
    params: Vec<Param>,
    output: Span,
    /// Whether the return type is an answer type (`Result`, `Reply`, ...) rather than the
    /// success value itself.
    returns_answer: bool,
    /// The action schema validated at compile time, as JSON (property form).
    schema: Option<Value>,
}

impl<'a> MethodAction<'a> {
    fn parse(method: &'a ImplItemFn, params: Vec<Param>) -> syn::Result<Self> {
        let sig = &method.sig;
        let (output, returns_answer) = check_signature(sig)?;
        let mut contexts = params.iter().filter(|p| matches!(p, Param::Context { .. }));
        if let (Some(_), Some(second)) = (contexts.next(), contexts.next()) {
            return Err(syn::Error::new(
                second.span(),
                "an action takes the `Context` once",
            ));
        }
        let mut data = params
            .iter()
            .filter(|p| !matches!(p, Param::Context { .. }));
        if let (Some(first), Some(second)) = (data.next(), data.next()) {
            let structs = [first, second]
                .iter()
                .any(|p| matches!(p, Param::Params { .. }));
            if structs {
                return Err(syn::Error::new(
                    second.span(),
                    "an action's data is either its parameters or one `Params<T>`, not both",
                ));
            }
        }
        let structs = usize::from(params.iter().any(|p| matches!(p, Param::Params { .. })));
        let payload = match params_type(sig) {
            Some(ty) => Payload::Struct(ty),
            None => Payload::Unit,
        };
        let action = Action::from_attrs(&sig.ident, &method.attrs, payload, "method")?;
        let mut this = MethodAction {
            action,
            method: &sig.ident,
            params,
            output,
            returns_answer,
            schema: None,
        };
        if structs == 0 {
            this.schema = Some(this.check_properties()?);
        } else {
            this.action.check()?;
        }
        Ok(this)
    }
}

/// The return types an action's answer converts from (`IntoActionResult`); any other is the
/// success value itself.
const ANSWER_TYPES: [&str; 4] = ["Result", "ActionResult", "Reply", "Value"];

/// An action's signature: `&self` first, not generic, a return type (whose span it gives,
/// and whether it is an answer type rather than the value itself).
fn check_signature(sig: &syn::Signature) -> syn::Result<(Span, bool)> {
    match sig.inputs.first() {
        first if crate::receiver::is_shared_self(first) => {}
        other => {
            let span = other.map_or(sig.ident.span(), Spanned::span);
            return Err(syn::Error::new(
                span,
                "an action takes `&self` first: `async fn add(&self, ...)`",
            ));
        }
    }
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            sig.generics.span(),
            "an action method cannot be generic",
        ));
    }
    match &sig.output {
        ReturnType::Type(_, ty) => Ok((ty.span(), params::is_answer_type(ty, &ANSWER_TYPES))),
        ReturnType::Default => Err(syn::Error::new(
            sig.ident.span(),
            "an action returns its answer: `-> T` or `-> Result<T, Failure>` (`T: Serialize`), `-> Reply` or `-> ActionResult`",
        )),
    }
}

/// The `T` of the method's `Params<T>` parameter.
fn params_type(sig: &syn::Signature) -> Option<&Type> {
    sig.inputs.iter().find_map(|arg| match arg {
        syn::FnArg::Typed(arg) => params::single_argument(&arg.ty, "Params"),
        syn::FnArg::Receiver(_) => None,
    })
}

impl MethodAction<'_> {
    fn properties(&self) -> impl Iterator<Item = &Property> {
        self.params.iter().filter_map(|p| match p {
            Param::Property(p) => Some(&**p),
            _ => None,
        })
    }

    /// Runs the runtime's chain on the whole action schema (a property whose type only its
    /// `JsonSchema` impl knows stands as `{}`), pointing a refusal at the token that wrote
    /// the offending part.
    fn check_properties(&self) -> syn::Result<Value> {
        let span = self.action.name_span;
        let mut entries: Vec<(String, Span, Node)> =
            self.action.nodes.iter().map(typed::clone_entry).collect();
        let properties: Vec<(String, Span, Node)> = self
            .properties()
            .map(|p| (p.name.clone(), p.span, p.schema_node()))
            .collect();
        entries.push(("properties".into(), span, Node::Object(properties, span)));
        let required: Vec<Node> = self
            .properties()
            .filter(|p| p.required())
            .map(|p| Node::Scalar(Value::String(p.name.clone()), p.span))
            .collect();
        if !required.is_empty() {
            entries.push(("required".into(), span, Node::Array(required, span)));
        }
        let defaults: Vec<(String, Span, Node)> = self
            .properties()
            .filter_map(|p| {
                p.default
                    .as_ref()
                    .map(|d| (p.name.clone(), d.span(), d.clone()))
            })
            .collect();
        if !defaults.is_empty() {
            entries.push(("defaults".into(), span, Node::Object(defaults, span)));
        }
        let schema = Node::Object(entries, span);
        let value = schema.to_value();
        if let Err(problem) = wymcp_core::validate_action(&self.action.name, &value) {
            let error = ConfigurationError::new(problem).in_action(self.action.name.clone());
            let root = Node::Object(vec![(self.action.name.clone(), span, schema)], span);
            let at = match error.problem() {
                Problem::ActionNameEmpty | Problem::ActionNameNewline(_) => span,
                _ => locate::span_of(&root, &error),
            };
            return Err(syn::Error::new(at, error.to_string()));
        }
        Ok(value)
    }

    /// `.action_value(name, schema)` for `Actions`.
    fn declaration(&self) -> TokenStream {
        let name = &self.action.name;
        let schema = match (&self.schema, params_struct(&self.params)) {
            (_, Some(ty)) => {
                let extras = Value::Object(self.action.extras.clone()).to_string();
                let method = self.method.to_string();
                let type_name = quote!(#ty).to_string().replace(' ', "");
                quote_spanned! {ty.span()=>
                    ::wymcp::__private::params_action::<#ty>(#extras, #method, #type_name)
                }
            }
            (Some(schema), None) => {
                let text = schema.to_string();
                let runtime = self.properties().filter(|p| p.derived.is_none()).map(|p| {
                    let name = &p.name;
                    let ty = &p.schema_type;
                    let overlay = p.overlay_value().to_string();
                    quote_spanned! {ty.span()=>
                        (#name, ::wymcp::__private::property_schema::<#ty>(#overlay))
                    }
                });
                quote! {
                    ::wymcp::__private::method_action(#text, ::std::vec![#(#runtime),*])
                }
            }
            (None, None) => quote!(::wymcp::__private::method_action("{}", ::std::vec![])),
        };
        quote! { .action_value(#name, #schema) }
    }

    /// The `run_action` arm calling the method with its arguments taken from the data.
    fn arm(&self) -> TokenStream {
        let name = &self.action.name;
        let method = self.method;
        let mut takes = Vec::new();
        let mut args = Vec::new();
        for (i, param) in self.params.iter().enumerate() {
            let arg = syn::Ident::new(&format!("__wymcp_arg{i}"), Span::call_site());
            match param {
                Param::Context { by_ref: true, .. } => args.push(quote!(&ctx)),
                Param::Context { by_ref: false, .. } => args.push(quote!(ctx.clone())),
                Param::Params { inner, .. } => {
                    takes.push(quote! {
                        let #arg = ::wymcp::__private::params::<#inner>(
                            ::core::mem::take(&mut __wymcp_data),
                        )?;
                    });
                    args.push(quote!(#arg));
                }
                Param::Property(p) => {
                    let ty = &p.ty;
                    let property = &p.name;
                    takes.push(quote_spanned! {ty.span()=>
                        let #arg = ::wymcp::__private::arg::<#ty>(&mut __wymcp_data, #property)?;
                    });
                    args.push(quote!(#arg));
                }
            }
        }
        let call = quote_spanned!(self.output=> Self::#method(self, #(#args),*).await);
        let answer = if self.returns_answer {
            quote_spanned! {self.output=> ::wymcp::__private::answer(#call) }
        } else {
            quote_spanned! {self.output=>
                ::wymcp::__private::answer(::core::result::Result::<_, ::wymcp::tool::Failure>::Ok(#call))
            }
        };
        quote! {
            #name => {
                #(#takes)*
                #answer
            }
        }
    }
}

fn params_struct(params: &[Param]) -> Option<&Type> {
    params.iter().find_map(|p| match p {
        Param::Params { inner, .. } => Some(&**inner),
        _ => None,
    })
}
