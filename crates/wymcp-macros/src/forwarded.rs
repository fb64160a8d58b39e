//! The `ActionTool` and `PlainTool` methods a block provides by a same-named, non-async method
//! (`hints`, `title`, ...): the trait method calling it.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

/// `ActionTool::<ident>` calling the block's method of that name.
pub(crate) fn forward(ident: &syn::Ident) -> TokenStream {
    let value = quote!(::wymcp::__private::serde_json::Value);
    let map = quote!(::wymcp::__private::serde_json::Map<::std::string::String, #value>);
    let (inputs, args, output) = match ident.to_string().as_str() {
        "hints" => (
            quote!(action: &str, hint_context: &#value),
            quote!(action, hint_context),
            quote!(::std::vec::Vec<::wymcp::Hint>),
        ),
        "handle_error" => (
            quote!(reason: &::wymcp::ActionError),
            quote!(reason),
            quote!(::std::string::String),
        ),
        "title" => (
            quote!(),
            quote!(),
            quote!(::core::option::Option<::std::string::String>),
        ),
        "scopes" => (
            quote!(),
            quote!(),
            quote!(::std::vec::Vec<::std::string::String>),
        ),
        "action_context" => (
            quote!(action: &str, ctx: &::wymcp::Context),
            quote!(action, ctx),
            quote!(::core::option::Option<#map>),
        ),
        _ => (quote!(), quote!(), quote!(::core::option::Option<#map>)),
    };
    let call = quote_spanned!(ident.span()=> Self::#ident(self, #args));
    quote! {
        fn #ident(&self, #inputs) -> #output { #call }
    }
}
