//! `#[wymcp::prompts]` on an `impl` block: each `async fn` taking `&self` is a prompt, named
//! after the method, described by its doc comment, its other parameters the arguments (as for
//! a `#[wymcp::prompt]` function); `#[wymcp(title = "...")]` gives it a title. For each, the
//! block gains `<method>_prompt(&self)`, the prompt to register, rendering through a clone of
//! `self`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl};

use crate::attrs;
use crate::json::Node;

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if let Some(token) = attr.into_iter().next() {
        return Err(syn::Error::new(
            token.span(),
            "`#[wymcp::prompts]` takes no arguments: each `async fn` of the block is a prompt named after it",
        ));
    }
    let mut block: ItemImpl = syn::parse2(item)?;
    if block.trait_.is_some() || !block.generics.params.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "`#[wymcp::prompts]` goes on an inherent, non-generic `impl` block",
        ));
    }
    let self_ty = (*block.self_ty).clone();
    let mut items = Vec::new();
    let mut constructors = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(f) = item else { continue };
        if f.sig.asyncness.is_none() {
            continue;
        }
        let title = title(&f.attrs)?;
        f.attrs.retain(|a| !a.path().is_ident("wymcp"));
        let (generated, ident) = crate::prompt::method_prompt(&self_ty, f, title)?;
        items.push(generated);
        let method = &f.sig.ident;
        let constructor = format_ident!("{}_prompt", method);
        let doc = format!(
            "The prompt `{method}`, rendered by [`Self::{method}`] through a clone of `self`."
        );
        constructors.push(quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            pub fn #constructor(&self) -> impl ::wymcp::Prompt
            where
                Self: ::core::clone::Clone + ::core::marker::Send + ::core::marker::Sync + 'static,
            {
                #ident(::core::clone::Clone::clone(self))
            }
        });
    }
    if constructors.is_empty() {
        return Err(syn::Error::new(
            block.self_ty.span(),
            "no prompt here: write an `async fn` taking `&self` in this block",
        ));
    }
    Ok(quote! {
        #block

        #(#items)*

        impl #self_ty {
            #(#constructors)*
        }
    })
}

/// `#[wymcp(title = "...")]`, when written.
fn title(attrs: &[syn::Attribute]) -> syn::Result<Option<String>> {
    let mut title = None;
    for entry in attrs::wymcp_entries(attrs, &["title"])? {
        match &entry.value {
            Some(Node::Scalar(Value::String(text), _)) => title = Some(text.clone()),
            _ => return Err(syn::Error::new(entry.span(), "expected `title = \"...\"`")),
        }
    }
    Ok(title)
}
