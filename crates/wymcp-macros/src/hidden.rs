//! The hidden type behind a plain tool or prompt method: a type of its own holding a clone of
//! the block's value, implementing the trait by calling the method.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Type;

/// The hidden type of a companion: `__Wymcp<kind><Type>_<method>`.
pub(crate) fn hidden_ident(kind: &str, self_ty: &Type, method: &syn::Ident) -> syn::Ident {
    let ty = match self_ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    };
    format_ident!("__Wymcp{}{}_{}", kind, ty, method)
}

/// The hidden type `ident`, holding a `self_ty`, with its `implementation`; and its name.
pub(crate) fn hidden_type(
    ident: syn::Ident,
    self_ty: &Type,
    implementation: TokenStream,
) -> (TokenStream, syn::Ident) {
    let items = quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        struct #ident(#self_ty);

        #implementation
    };
    (items, ident)
}
