//! `#[derive(ActionEnum)]`: a tool's actions from an enum whose variants carry serde structs.
//!
//! What the enum says is checked here, while the user's crate compiles, by the very chain the
//! runtime `build()` runs (action names, the description from the variant's doc, and the
//! `#[wymcp(...)]` extras: `required_one_of`, `notes`, `related`, `example`). What depends on the
//! payload structs (their property schemas, `required`, `defaults`) is only known to `schemars`
//! at run time: the generated code produces it once, when the server is built, and `build()`
//! validates it like any other action.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use serde_json::{Map, Value};
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Fields, Variant};
use wymcp_core::{ConfigurationError, Problem};

use crate::attrs;
use crate::json::Node;
use crate::locate;

/// The keys `#[wymcp(...)]` accepts on a variant.
const VARIANT_KEYS: [&str; 6] = [
    "rename",
    "required_one_of",
    "notes",
    "related",
    "example",
    "scopes",
];

pub(crate) fn derive(input: DeriveInput) -> syn::Result<TokenStream> {
    let Data::Enum(data) = &input.data else {
        return Err(syn::Error::new(
            input.ident.span(),
            "ActionEnum is derived for an enum whose variants are the tool's actions",
        ));
    };
    if !input.generics.params.is_empty() || input.generics.where_clause.is_some() {
        return Err(syn::Error::new(
            input.generics.span(),
            "ActionEnum cannot be derived for a generic enum",
        ));
    }
    if let Some(attr) = input.attrs.iter().find(|a| a.path().is_ident("wymcp")) {
        return Err(syn::Error::new(
            attr.span(),
            "`#[wymcp(...)]` goes on a variant (rename, required_one_of, notes, related, example, scopes), not on the enum",
        ));
    }
    if data.variants.is_empty() {
        return Err(syn::Error::new(
            input.ident.span(),
            "an action enum needs at least one variant: each variant is an action",
        ));
    }
    let mut actions = Vec::with_capacity(data.variants.len());
    for variant in &data.variants {
        let action = Action::parse(variant)?;
        if actions.iter().any(|a: &Action<'_>| a.name == action.name) {
            let error = ConfigurationError::new(Problem::DuplicateAction(action.name.clone()))
                .in_action(action.name.clone());
            return Err(syn::Error::new(action.name_span, error.to_string()));
        }
        action.check()?;
        actions.push(action);
    }
    crate::cross_checks::check_related(&actions)?;
    Ok(expand(&input.ident, &actions))
}

/// What the payload of a variant is.
pub(crate) enum Payload<'a> {
    /// A unit variant: an action without properties.
    Unit,
    /// A one-field tuple variant: the struct whose fields are the action's properties.
    Struct(&'a syn::Type),
}

/// One variant (or action method), read.
pub(crate) struct Action<'a> {
    pub(crate) ident: &'a syn::Ident,
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) payload: Payload<'a>,
    /// The extras: description, required_one_of, notes, related, examples, as JSON.
    pub(crate) extras: Map<String, Value>,
    /// The same, with the spans of the tokens that wrote them (for refusals).
    pub(crate) nodes: Vec<(String, Span, Node)>,
}

impl<'a> Action<'a> {
    fn parse(variant: &'a Variant) -> syn::Result<Self> {
        let payload = match &variant.fields {
            Fields::Unit => Payload::Unit,
            Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
                Payload::Struct(&fields.unnamed[0].ty)
            }
            Fields::Unnamed(fields) => {
                return Err(syn::Error::new(
                    fields.span(),
                    "an action variant carries one struct (`Create(CreateTask)`) or nothing (`List`)",
                ));
            }
            Fields::Named(fields) => {
                return Err(syn::Error::new(
                    fields.span(),
                    "an action variant carries one struct (`Create(CreateTask)`) or nothing (`List`): move these fields into a struct deriving `Deserialize` and `JsonSchema`",
                ));
            }
        };
        if let Some((_, expr)) = &variant.discriminant {
            return Err(syn::Error::new(
                expr.span(),
                "an action variant takes no discriminant",
            ));
        }
        Action::from_attrs(&variant.ident, &variant.attrs, payload, "variant")
    }

    /// An action named after `ident` (in snake_case), described by the doc comment among
    /// `attrs`, with the extras of their `#[wymcp(...)]` attributes. `item` names what carries
    /// the doc ("variant", "method") in the refusal of a missing one.
    pub(crate) fn from_attrs(
        ident: &'a syn::Ident,
        attrs: &[Attribute],
        payload: Payload<'a>,
        item: &str,
    ) -> syn::Result<Self> {
        let mut action = Action {
            ident,
            name: snake_case(&ident.to_string()),
            name_span: ident.span(),
            payload,
            extras: Map::new(),
            nodes: Vec::new(),
        };
        action.read_wymcp(attrs)?;
        action.read_doc(attrs, ident.span(), item)?;
        Ok(action)
    }

    /// The variant's doc: the first paragraph is the description (one line), the rest, after a
    /// blank line, the notes.
    fn read_doc(&mut self, attrs: &[Attribute], fallback: Span, item: &str) -> syn::Result<()> {
        let mut lines = attrs::doc_lines(attrs);
        for (line, _) in &mut lines {
            if line.trim().is_empty() {
                line.clear();
            }
        }
        while lines.first().is_some_and(|(l, _)| l.is_empty()) {
            lines.remove(0);
        }
        while lines.last().is_some_and(|(l, _)| l.is_empty()) {
            lines.pop();
        }
        let Some((_, first_span)) = lines.first() else {
            let error =
                ConfigurationError::new(Problem::MissingDescription).in_action(self.name.clone());
            return Err(syn::Error::new(
                fallback,
                format!("{error}: write a one-line `///` doc comment on the {item}"),
            ));
        };
        let mut span = *first_span;
        let end = lines
            .iter()
            .position(|(l, _)| l.is_empty())
            .unwrap_or(lines.len());
        if let Some((_, second)) = lines.get(1).filter(|_| end > 1) {
            // A second line in the first paragraph: the refusal points at it.
            span = *second;
        }
        let description: Vec<&str> = lines[..end].iter().map(|(l, _)| l.trim()).collect();
        self.push(
            "description",
            span,
            Node::Scalar(Value::String(description.join("\n")), span),
        );
        let notes: Vec<&str> = lines[end..]
            .iter()
            .map(|(l, _)| l.as_str())
            .skip_while(|l| l.trim().is_empty())
            .collect();
        if let Some((_, notes_span)) = lines.get(end + 1) {
            if self.extras.contains_key("notes") {
                return Err(syn::Error::new(
                    *notes_span,
                    "notes given twice: by `#[wymcp(notes = ...)]` and by the doc comment's paragraphs after the first",
                ));
            }
            let text = notes.join("\n");
            self.push(
                "notes",
                *notes_span,
                Node::Scalar(Value::String(text), *notes_span),
            );
        }
        Ok(())
    }

    /// The entries of the `#[wymcp(key = value, ...)]` attributes among `attrs`, each one
    /// `key = value`.
    fn read_wymcp(&mut self, attrs: &[Attribute]) -> syn::Result<()> {
        for entry in attrs::wymcp_entries(attrs, &VARIANT_KEYS)? {
            let name = entry.name();
            let key_span = entry.span();
            let Some(node) = entry.value else {
                return Err(syn::Error::new(
                    key_span,
                    format!("expected `{name} = ...`"),
                ));
            };
            self.read_entry(&name, key_span, node)?;
        }
        Ok(())
    }

    /// One entry: `rename` names the action, each `example` adds one, any other key is an
    /// extra given once.
    fn read_entry(&mut self, name: &str, key_span: Span, node: Node) -> syn::Result<()> {
        match name {
            "rename" => match &node {
                Node::Scalar(Value::String(s), span) => {
                    self.name = s.clone();
                    self.name_span = *span;
                }
                other => {
                    return Err(syn::Error::new(
                        other.span(),
                        "rename takes a string: `rename = \"...\"`",
                    ));
                }
            },
            "example" => {
                let mut items = match self.nodes.iter().position(|(k, _, _)| k == "examples") {
                    Some(i) => match self.nodes.remove(i).2 {
                        Node::Array(items, _) => items,
                        _ => Vec::new(),
                    },
                    None => Vec::new(),
                };
                let span = node.span();
                items.push(node);
                self.push("examples", key_span, Node::Array(items, span));
            }
            _ => {
                if self.nodes.iter().any(|(k, _, _)| k == name) {
                    return Err(syn::Error::new(key_span, format!("{name} given twice")));
                }
                self.push(name, key_span, node);
            }
        }
        Ok(())
    }

    fn push(&mut self, key: &str, span: Span, node: Node) {
        self.extras.insert(key.to_owned(), node.to_value());
        self.nodes.push((key.to_owned(), span, node));
    }

    /// Runs the runtime's chain on what is known now: the name, the description and the
    /// extras. A unit variant has no properties; for a struct, every name the extras mention
    /// stands in for a declared property (its real properties are checked by `build()`).
    pub(crate) fn check(&self) -> syn::Result<()> {
        let mut mentioned = Map::new();
        if let Payload::Struct(_) = &self.payload {
            // The struct's fields are schemars' to know: the names the extras use stand in.
            let groups = self.extras.get("required_one_of").and_then(Value::as_array);
            let grouped = groups.into_iter().flatten().filter_map(Value::as_array);
            let examples = self.extras.get("examples").and_then(Value::as_array);
            let keys = examples
                .into_iter()
                .flatten()
                .filter_map(Value::as_object)
                .flat_map(|e| e.keys().cloned().map(Value::String));
            for name in grouped.flatten().cloned().chain(keys) {
                if let Value::String(name) = name {
                    mentioned.insert(name, Value::Object(Map::new()));
                }
            }
        }
        let mut schema = self.extras.clone();
        schema.insert("properties".into(), Value::Object(mentioned));
        if let Err(problem) = wymcp_core::validate_action(&self.name, &Value::Object(schema)) {
            let error = ConfigurationError::new(problem).in_action(self.name.clone());
            let span = match error.problem() {
                Problem::ActionNameEmpty | Problem::ActionNameNewline(_) => self.name_span,
                _ => {
                    let root = Node::Object(
                        vec![(
                            self.name.clone(),
                            self.name_span,
                            Node::Object(
                                self.nodes.iter().map(clone_entry).collect(),
                                self.name_span,
                            ),
                        )],
                        self.name_span,
                    );
                    locate::span_of(&root, &error)
                }
            };
            return Err(syn::Error::new(span, error.to_string()));
        }
        Ok(())
    }
}

pub(crate) fn clone_entry((k, s, n): &(String, Span, Node)) -> (String, Span, Node) {
    (k.clone(), *s, n.clone())
}

/// `CreateTask` → `create_task`, `GetByID` → `get_by_id`, `V2Import` → `v2_import`.
pub(crate) fn snake_case(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::with_capacity(ident.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev = i.checked_sub(1).map(|p| chars[p]);
            let next = chars.get(i + 1);
            let boundary = match prev {
                None | Some('_') => false,
                Some(p) if p.is_lowercase() || p.is_ascii_digit() => true,
                Some(p) => p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()),
            };
            if boundary {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

fn expand(ident: &syn::Ident, actions: &[Action<'_>]) -> TokenStream {
    let declared = actions.iter().map(Action::declared);
    let parsed = actions.iter().map(Action::parse_arm);
    let names = actions.iter().map(Action::name_arm);
    let checks = actions.iter().map(Action::field_checks);
    quote! {
        #(#checks)*

        #[automatically_derived]
        impl ::wymcp::ActionEnum for #ident {
            fn actions() -> ::wymcp::Actions {
                ::wymcp::Actions::new()
                    #(#declared)*
            }

            fn from_action(
                action: &str,
                data: ::wymcp::Data,
            ) -> ::core::result::Result<Self, ::wymcp::ActionError> {
                let _ = &data;
                match action {
                    #(#parsed)*
                    other => ::core::result::Result::Err(::wymcp::__private::unknown_action(other)),
                }
            }

            fn action_name(&self) -> &'static str {
                match self {
                    #(#names)*
                }
            }
        }
    }
}

impl Action<'_> {
    /// `.action_value(name, schema)`: the action's schema, built when the server is (a
    /// struct's by schemars).
    fn declared(&self) -> TokenStream {
        let name = &self.name;
        let extras = Value::Object(self.extras.clone()).to_string();
        let variant = self.ident.to_string();
        match self.payload {
            Payload::Unit => quote! {
                .action_value(#name, ::wymcp::__private::unit_action(#extras))
            },
            Payload::Struct(ty) => {
                let type_name = quote!(#ty).to_string().replace(' ', "");
                let call = quote_spanned! {ty.span()=>
                    ::wymcp::__private::typed_action::<#ty>(#extras, #variant, #type_name)
                };
                quote! { .action_value(#name, #call) }
            }
        }
    }

    /// The `from_action` arm: the admitted data parsed into the variant.
    fn parse_arm(&self) -> TokenStream {
        let name = &self.name;
        let v = self.ident;
        match self.payload {
            Payload::Unit => quote! { #name => ::core::result::Result::Ok(Self::#v), },
            Payload::Struct(ty) => {
                let parse = quote_spanned! {ty.span()=>
                    ::wymcp::__private::parse_data::<#ty>(&data)
                };
                quote! { #name => #parse.map(Self::#v), }
            }
        }
    }

    /// The `action_name` arm.
    fn name_arm(&self) -> TokenStream {
        let name = &self.name;
        let v = self.ident;
        match self.payload {
            Payload::Unit => quote! { Self::#v => #name, },
            Payload::Struct(_) => quote! { Self::#v(..) => #name, },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::snake_case;

    #[test]
    fn variant_names_become_snake_case() {
        assert_eq!(snake_case("Create"), "create");
        assert_eq!(snake_case("CreateTask"), "create_task");
        assert_eq!(snake_case("GetByID"), "get_by_id");
        assert_eq!(snake_case("HTTPGet"), "http_get");
        assert_eq!(snake_case("V2Import"), "v2_import");
    }
}
