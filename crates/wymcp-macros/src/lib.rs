//! Compile-time validation of wymcp action schemas. Use these through the `wymcp` crate.

#![warn(missing_docs)]

mod action_names;
mod attrs;
mod companions;
mod cross_checks;
mod fallback;
mod fields;
mod forwarded;
mod hidden;
mod json;
mod locate;
mod methods;
mod params;
mod plain;
mod prompt;
mod prompts;
mod receiver;
mod resources;
mod typed;

use proc_macro::TokenStream;
use quote::quote;

/// Declares a tool's actions as a JSON literal and validates them while your crate compiles,
/// with the very checks `build()` runs; a refusal fails the build at the offending token, with
/// the runtime's message.
///
/// Expands to a `wymcp::Actions`.
#[proc_macro]
pub fn actions(input: TokenStream) -> TokenStream {
    match expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn expand(input: proc_macro2::TokenStream) -> syn::Result<proc_macro2::TokenStream> {
    let node = json::parse(input)?;
    let value = node.to_value();
    let actions = wymcp_core::Actions::from_value(value.clone());
    if let Err(error) = wymcp_core::validate_actions(&actions) {
        let span = locate::span_of(&node, &error);
        return Err(syn::Error::new(span, error.to_string()));
    }
    let text = value.to_string();
    Ok(quote! {
        ::wymcp::__private::actions_from_validated_json(#text)
    })
}

/// Derives `wymcp::ActionEnum` for an enum of actions: each variant is an action, named after
/// the variant in snake_case, described by the variant's doc comment, whose `data` is the
/// struct it carries (`Create(CreateTask)`) or nothing (`List`).
///
/// What is known at compile time is checked here, by the runtime's chain: the action names,
/// the one-line description (the doc's first paragraph; later paragraphs are the notes) and
/// the `#[wymcp(rename = "...", required_one_of = [[...]], notes = "...", related = [...],
/// example = {...})]` extras. The property schemas come from `schemars` when the server is
/// built, and `build()` validates them.
#[proc_macro_derive(ActionEnum, attributes(wymcp))]
pub fn derive_action_enum(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    let stub = fallback::action_enum(&input);
    match typed::derive(input) {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#error #stub).into()
        }
    }
}

/// Runs an attribute macro's expansion; on an error, emits it beside `fallback`'s stand-in for
/// the item (so the item's other uses still compile and only the error is reported).
fn attribute(
    attr: TokenStream,
    item: TokenStream,
    expand: fn(
        proc_macro2::TokenStream,
        proc_macro2::TokenStream,
    ) -> syn::Result<proc_macro2::TokenStream>,
    fallback: fn(proc_macro2::TokenStream) -> proc_macro2::TokenStream,
) -> TokenStream {
    let item = proc_macro2::TokenStream::from(item);
    match expand(attr.into(), item.clone()) {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            let error = error.to_compile_error();
            let stand_in = fallback(item);
            quote!(#error #stand_in).into()
        }
    }
}

/// Makes an inherent `impl` block a tool: each `async fn` is an action and the type implements
/// `wymcp::ActionTool`. See `wymcp::tool` for the rules.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    attribute(attr, item, methods::expand, |item| {
        fallback::impl_block(item, fallback::Stub::ActionTool)
    })
}

/// Makes an inherent `impl` block holding one `async fn` a plain tool: the type implements
/// `wymcp::PlainTool`. See `wymcp::plain_tool` for the rules.
#[proc_macro_attribute]
pub fn plain_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    attribute(attr, item, plain::expand, |item| {
        fallback::impl_block(item, fallback::Stub::PlainTool)
    })
}

/// Makes an `async fn` a prompt: a unit struct of the same name implementing
/// `wymcp::Prompt`. See `wymcp::prompt` for the rules.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    attribute(attr, item, prompt::expand, fallback::prompt)
}

/// Makes each `async fn` of an `impl` block a prompt rendered by that method: the block gains
/// `<method>_prompt(&self)`. See `wymcp::prompts` for the rules.
#[proc_macro_attribute]
pub fn prompts(attr: TokenStream, item: TokenStream) -> TokenStream {
    attribute(attr, item, prompts::expand, |item| {
        fallback::impl_block(item, fallback::Stub::Nothing)
    })
}

/// Makes the marked `async fn`s of an `impl` block resources and resource templates. See
/// `wymcp::resources` for the rules.
#[proc_macro_attribute]
pub fn resources(attr: TokenStream, item: TokenStream) -> TokenStream {
    attribute(attr, item, resources::expand, |item| {
        fallback::impl_block(item, fallback::Stub::Nothing)
    })
}

/// Derives `Deserialize`, `Serialize` and `JsonSchema` through wymcp's own serde and schemars,
/// and the traits listed (`#[wymcp::data(Clone, Debug)]`). See `wymcp::data`.
#[proc_macro_attribute]
pub fn data(attr: TokenStream, item: TokenStream) -> TokenStream {
    let parser = syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated;
    let extra = match syn::parse::Parser::parse(parser, attr) {
        Ok(paths) => paths.into_iter().collect::<Vec<_>>(),
        Err(error) => {
            let message = format!(
                "{error}: `#[wymcp::data]` takes the traits to derive beside its own, `#[wymcp::data(Clone, Debug)]`"
            );
            return syn::Error::new(error.span(), message)
                .to_compile_error()
                .into();
        }
    };
    let item = proc_macro2::TokenStream::from(item);
    let fields = syn::parse2::<syn::DeriveInput>(item.clone())
        .map(|input| fields::record(&input))
        .unwrap_or_default();
    quote! {
        #[derive(
            ::wymcp::__private::serde::Deserialize,
            ::wymcp::__private::serde::Serialize,
            ::wymcp::__private::schemars::JsonSchema,
            #(#extra,)*
        )]
        #[serde(crate = "::wymcp::__private::serde")]
        #[schemars(crate = "::wymcp::__private::schemars")]
        #item

        #fields
    }
    .into()
}
