//! Compile-time validation of wymcp action schemas. Use these through the `wymcp` crate.

#![warn(missing_docs)]

mod json;
mod locate;

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
