//! `#[wymcp::plain_tool]` on an `impl` block holding one `async fn`: the block's type
//! implements `wymcp::PlainTool`, the method is the tool.
//!
//! The tool's name is the method's, its description the method's doc comment, its input schema
//! the parameters (as for an action method, without defaults: a plain tool's arguments have
//! none), its output schema the `JsonSchema` of the `T` the method returns (`-> T` or
//! `-> Result<T, E>`).
//! An input schema of standard types is validated here by the runtime's own check.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use serde_json::{Map, Value};
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl, ReturnType, Type};
use wymcp_core::ConfigurationError;

use crate::attrs;
use crate::forwarded::forward;
use crate::params::{self, Param, Property};

/// The keys `#[wymcp::plain_tool(...)]` accepts.
const TOOL_KEYS: [&str; 2] = ["name", "description"];

/// The return types a plain tool's answer converts from (`IntoCallResult`); any other is the
/// success value itself.
const ANSWER_TYPES: [&str; 2] = ["Result", "CallResult"];

/// The refusal of a plain tool's method that returns nothing.
const NO_ANSWER: &str = "a plain tool returns its answer: `-> T` or `-> Result<T, Failure>` (`T: Serialize + JsonSchema` gives the output schema), or `-> CallResult`";

/// The `PlainTool` methods a same-named, non-async method of the block provides.
const FORWARDED: [&str; 4] = ["output_schema", "title", "annotations", "scopes"];

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let mut block: ItemImpl = syn::parse2(item)?;
    if block.trait_.is_some() || !block.generics.params.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "`#[wymcp::plain_tool]` goes on an inherent, non-generic `impl` block",
        ));
    }
    let (name, description) = tool_texts(attr)?;
    let Read {
        method,
        params,
        forwarded,
        own_output_schema,
    } = read_items(&mut block)?;
    let name = name.unwrap_or_else(|| method.sig.ident.to_string());
    let description = description_of(&method, description)?;
    let call = (quote!(Self), quote!(self));
    let tool = texts(
        &method,
        &params,
        (&name, &description),
        own_output_schema,
        call,
    )?;
    let self_ty = &block.self_ty;
    let implementation = plain_impl(&quote!(#self_ty), tool, &forwarded);
    Ok(quote! {
        #block

        #implementation
    })
}

/// A `#[wymcp(plain)]` method of a `#[wymcp::tool]` block: a hidden type holding a clone of
/// the block's value, implementing `wymcp::PlainTool` by calling the method. Returns its items
/// and the type's name.
pub(crate) fn companion(
    self_ty: &Type,
    method: &syn::ImplItemFn,
    params: &[Param],
) -> syn::Result<(TokenStream, syn::Ident)> {
    let name = method.sig.ident.to_string();
    let description = description_of(method, None)?;
    let call = (quote!(<#self_ty>), quote!(&self.0));
    let tool = texts(method, params, (&name, &description), false, call)?;
    let ident = crate::hidden::hidden_ident("Plain", self_ty, &method.sig.ident);
    let implementation = plain_impl(&quote!(#ident), tool, &[]);
    Ok(crate::hidden::hidden_type(ident, self_ty, implementation))
}

/// The tool's parts from its method: the input and output schemas (none when the block writes
/// its own `output_schema`), and `run` calling `<callee>::<method>(<receiver>, ...)`.
fn texts<'a>(
    method: &syn::ImplItemFn,
    params: &[Param],
    (name, description): (&'a str, &'a str),
    own_output_schema: bool,
    (callee, receiver): (TokenStream, TokenStream),
) -> syn::Result<Texts<'a>> {
    let sig = &method.sig;
    check_receiver(sig)?;
    let input = input_schema(name, params)?;
    let output = match (&sig.output, own_output_schema) {
        (_, true) => quote!(),
        (ReturnType::Type(_, ty), false) => output_schema(ty)?,
        (ReturnType::Default, false) => {
            return Err(syn::Error::new(sig.ident.span(), NO_ANSWER));
        }
    };
    let run = run_body(sig, params, &callee, &receiver);
    Ok(Texts {
        name,
        description,
        input,
        output,
        run,
    })
}

/// What a `PlainTool` impl says: its texts, and the generated bodies.
struct Texts<'a> {
    name: &'a str,
    description: &'a str,
    input: TokenStream,
    output: TokenStream,
    run: TokenStream,
}

/// `impl wymcp::PlainTool for <target>`.
fn plain_impl(target: &TokenStream, tool: Texts<'_>, forwarded: &[TokenStream]) -> TokenStream {
    let Texts {
        name,
        description,
        input,
        output,
        run,
    } = tool;
    let map = quote!(::wymcp::__private::serde_json::Map<::std::string::String, ::wymcp::__private::serde_json::Value>);
    quote! {
        #[automatically_derived]
        impl ::wymcp::PlainTool for #target {
            fn name(&self) -> &str { #name }
            fn description(&self) -> &str { #description }
            fn input_schema(&self) -> #map {
                #input
            }
            async fn run(&self, arguments: #map, ctx: ::wymcp::Context) -> ::wymcp::CallResult {
                #run
            }
            #output
            #(#forwarded)*
        }
    }
}

/// A plain tool's method takes `&self` first.
fn check_receiver(sig: &syn::Signature) -> syn::Result<()> {
    match sig.inputs.first() {
        first if crate::receiver::is_shared_self(first) => Ok(()),
        _ => Err(syn::Error::new(
            sig.ident.span(),
            "a plain tool's method takes `&self` first",
        )),
    }
}

/// The description: the attribute's, else the method's doc comment; one of them is required.
fn description_of(method: &syn::ImplItemFn, given: Option<String>) -> syn::Result<String> {
    given
        .or_else(|| attrs::doc_text(&method.attrs).map(|d| d.0))
        .ok_or_else(|| {
            syn::Error::new(
                method.sig.ident.span(),
                "a plain tool needs a description: write a `///` doc comment on its method",
            )
        })
}

/// `#[wymcp::plain_tool(name = "...", description = "...")]`, each when given.
fn tool_texts(attr: TokenStream) -> syn::Result<(Option<String>, Option<String>)> {
    let (mut name, mut description) = (None, None);
    for entry in attrs::entries(attr, &TOOL_KEYS)? {
        let Some(crate::json::Node::Scalar(Value::String(text), _)) = &entry.value else {
            return Err(syn::Error::new(
                entry.span(),
                format!("expected `{} = \"...\"`", entry.name()),
            ));
        };
        match entry.name().as_str() {
            "name" => name = Some(text.clone()),
            _ => description = Some(text.clone()),
        }
    }
    Ok((name, description))
}

/// The block's one `async fn` with its parameters, and the `PlainTool` methods it provides.
struct Read {
    method: syn::ImplItemFn,
    params: Vec<Param>,
    forwarded: Vec<TokenStream>,
    own_output_schema: bool,
}

fn read_items(block: &mut ItemImpl) -> syn::Result<Read> {
    let mut runs = Vec::new();
    let mut forwarded = Vec::new();
    let mut own_output_schema = false;
    for item in &mut block.items {
        let ImplItem::Fn(f) = item else { continue };
        let ident = f.sig.ident.to_string();
        if f.sig.asyncness.is_some() {
            let mut read = Vec::new();
            for arg in f.sig.inputs.iter_mut().skip(1) {
                read.push(params::parse(arg)?);
            }
            runs.push((f.clone(), read));
        } else if FORWARDED.contains(&ident.as_str()) {
            own_output_schema |= ident == "output_schema";
            forwarded.push(forward(&f.sig.ident));
        }
    }
    if let Some((other, _)) = runs.get(1) {
        return Err(syn::Error::new(
            other.sig.ident.span(),
            "a plain tool is one `async fn`: write another tool (another type) for this one, or make them actions of one `#[wymcp::tool]`",
        ));
    }
    let Some((method, params)) = runs.pop() else {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "a plain tool is one `async fn` in this block",
        ));
    };
    Ok(Read {
        method,
        params,
        forwarded,
        own_output_schema,
    })
}

/// The input schema: validated now by `InputSchema::build` (a runtime-typed property standing
/// as `{}`), completed with the runtime schemas when the server is built.
fn input_schema(name: &str, params: &[Param]) -> syn::Result<TokenStream> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for param in params {
        match param {
            Param::Params { span, .. } => {
                return Err(syn::Error::new(
                    *span,
                    "a plain tool takes its arguments as parameters (`Params<T>` is for actions)",
                ));
            }
            Param::Context { .. } => {}
            Param::Property(p) => {
                if let Some(default) = &p.default {
                    return Err(syn::Error::new(
                        default.span(),
                        "a plain tool's arguments have no defaults: take an `Option<T>` and choose the value in the method",
                    ));
                }
                properties.insert(p.name.clone(), p.schema_node().to_value());
                if p.required() {
                    required.push(Value::String(p.name.clone()));
                }
            }
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    if let Err(problem) = wymcp_core::schema::InputSchema::build(&schema) {
        let error = ConfigurationError::new(problem).in_tool(name.to_owned());
        let span = property_span(params, &error.to_string()).unwrap_or_else(Span::call_site);
        return Err(syn::Error::new(span, error.to_string()));
    }
    let text = Value::Object(schema).to_string();
    let runtime = params.iter().filter_map(|p| match p {
        Param::Property(p) if p.derived.is_none() => Some(runtime_property(p)),
        _ => None,
    });
    Ok(quote! {
        ::wymcp::__private::plain_input_schema(#text, ::std::vec![#(#runtime),*])
    })
}

fn runtime_property(p: &Property) -> TokenStream {
    let name = &p.name;
    let ty = &p.schema_type;
    let overlay = p.overlay_value().to_string();
    quote_spanned! {ty.span()=>
        (#name, ::wymcp::__private::property_schema::<#ty>(#overlay))
    }
}

/// The span of the property a refusal's text names (its keyword when it names a format).
fn property_span(params: &[Param], message: &str) -> Option<Span> {
    params.iter().find_map(|p| match p {
        Param::Property(p) if message.contains(&format!("/properties/{}", p.name)) => Some(
            p.overlay
                .iter()
                .find(|(k, _, _)| k == "format" && message.contains("format"))
                .map_or(p.span, |(_, _, node)| node.span()),
        ),
        _ => None,
    })
}

/// `output_schema()` from the `T` of `-> T` or `-> Result<T, E>`: derived and validated now for a standard
/// object type (a `String`-keyed map), `T`'s `JsonSchema` for any other; none for a standard
/// type that is not an object (it is served as text only) or a `CallOutput`.
fn output_schema(ty: &Type) -> syn::Result<TokenStream> {
    let ok = match params::single_or_first_argument(ty, "Result") {
        Some(ok) => ok,
        None if params::is_answer_type(ty, &ANSWER_TYPES) => return Ok(quote!()),
        None => ty,
    };
    let map = quote!(::wymcp::__private::serde_json::Map<::std::string::String, ::wymcp::__private::serde_json::Value>);
    let body = match params::derive_output_schema(ok) {
        Some(Value::Object(schema)) if schema.get("type") == Some(&Value::from("object")) => {
            if let Err(problem) = wymcp_core::schema::build_output_schema(&schema) {
                return Err(syn::Error::new(ok.span(), problem.to_string()));
            }
            let text = Value::Object(schema).to_string();
            quote!(::wymcp::__private::plain_input_schema(#text, ::std::vec![]).into())
        }
        Some(_) => return Ok(quote!()),
        None if is_call_output(ok) => return Ok(quote!()),
        None => quote_spanned!(ok.span()=> ::wymcp::__private::plain_output_schema::<#ok>()),
    };
    Ok(quote! {
        fn output_schema(&self) -> ::core::option::Option<#map> {
            #body
        }
    })
}

fn is_call_output(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "CallOutput"))
}

/// `run`: the arguments taken from the map, the method called (`<callee>::<method>(<receiver>,
/// ...)`), its answer converted.
fn run_body(
    sig: &syn::Signature,
    params: &[Param],
    callee: &TokenStream,
    receiver: &TokenStream,
) -> TokenStream {
    let method = &sig.ident;
    let mut takes = Vec::new();
    let mut args = Vec::new();
    for (i, param) in params.iter().enumerate() {
        let arg = syn::Ident::new(&format!("__wymcp_arg{i}"), Span::call_site());
        match param {
            Param::Context { by_ref: true, .. } => args.push(quote!(&ctx)),
            Param::Context { by_ref: false, .. } => args.push(quote!(ctx.clone())),
            Param::Params { .. } => {}
            Param::Property(p) => {
                let ty = &p.ty;
                let name = &p.name;
                takes.push(quote_spanned! {ty.span()=>
                    let #arg = ::wymcp::__private::plain_arg::<#ty>(&mut __wymcp_arguments, #name)?;
                });
                args.push(quote!(#arg));
            }
        }
    }
    let (output, returns_answer) = match &sig.output {
        ReturnType::Type(_, ty) => (ty.span(), params::is_answer_type(ty, &ANSWER_TYPES)),
        ReturnType::Default => (sig.ident.span(), true),
    };
    let call = quote_spanned!(output=> #callee::#method(#receiver, #(#args),*).await);
    let answer = if returns_answer {
        quote_spanned! {output=> ::wymcp::__private::plain_answer(#call) }
    } else {
        quote_spanned! {output=>
            ::wymcp::__private::plain_answer(::core::result::Result::<_, ::wymcp::tool::Failure>::Ok(#call))
        }
    };
    quote! {
        #[allow(unused_mut)]
        let mut __wymcp_arguments = arguments;
        let _ = &ctx;
        #(#takes)*
        #answer
    }
}
