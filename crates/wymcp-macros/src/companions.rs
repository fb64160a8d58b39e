//! The companions of a `#[wymcp::tool]` block: its `#[wymcp(plain)]` methods (each a plain
//! tool) and `#[wymcp(prompt)]` methods (each a prompt), served beside the action tool. Each
//! is a hidden type holding a clone of the block's value; the tool's `companions()` makes them.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use serde_json::Value;
use syn::spanned::Spanned;
use syn::{ImplItemFn, Meta, Type};

use crate::attrs;
use crate::json::Node;
use crate::params;

/// What a method's marker asks for.
pub(crate) enum Marker {
    /// `#[wymcp(plain)]`.
    Plain(Span),
    /// `#[wymcp(prompt)]` or `#[wymcp(prompt, title = "...")]`.
    Prompt(Span, Option<String>),
}

/// One companion, generated.
pub(crate) struct Companion {
    items: TokenStream,
    ident: syn::Ident,
    marker: Span,
    prompt: bool,
}

/// The method's marker, when its `#[wymcp(...)]` starts with `plain` or `prompt`.
pub(crate) fn marker(f: &ImplItemFn) -> syn::Result<Option<Marker>> {
    for attr in f.attrs.iter().filter(|a| a.path().is_ident("wymcp")) {
        let Meta::List(list) = &attr.meta else {
            continue;
        };
        let first = list.tokens.clone().into_iter().next();
        let Some(proc_macro2::TokenTree::Ident(first)) = first else {
            continue;
        };
        let known: &[&str] = match first.to_string().as_str() {
            "plain" => &["plain"],
            "prompt" => &["prompt", "title"],
            _ => continue,
        };
        let mut title = None;
        for entry in attrs::entries(list.tokens.clone(), known)? {
            match (entry.name().as_str(), &entry.value) {
                ("title", Some(Node::Scalar(Value::String(text), _))) => title = Some(text.clone()),
                ("plain" | "prompt", None) => {}
                (name, _) => {
                    let expected = if name == "title" {
                        "expected `title = \"...\"`".to_owned()
                    } else {
                        format!("`{name}` takes no value: `#[wymcp({name})]`")
                    };
                    return Err(syn::Error::new(entry.span(), expected));
                }
            }
        }
        return Ok(Some(if first == "plain" {
            Marker::Plain(first.span())
        } else {
            Marker::Prompt(first.span(), title)
        }));
    }
    Ok(None)
}

/// Reads a marked method and generates its companion; the method stays in the block, without
/// the marker and its parameters' attributes.
pub(crate) fn read(self_ty: &Type, f: &mut ImplItemFn, marker: Marker) -> syn::Result<Companion> {
    if f.sig.asyncness.is_none() {
        return Err(syn::Error::new(
            f.sig.fn_token.span(),
            "a `#[wymcp(plain)]` or `#[wymcp(prompt)]` method is an `async fn`",
        ));
    }
    let mut wymcp_attrs = f.attrs.iter().filter(|a| a.path().is_ident("wymcp"));
    if let Some(extra) = wymcp_attrs.nth(1) {
        return Err(syn::Error::new(
            extra.meta.span(),
            "a plain tool or prompt method takes its one `#[wymcp(plain)]` or `#[wymcp(prompt)]`: examples, notes and related are an action's",
        ));
    }
    f.attrs.retain(|a| !a.path().is_ident("wymcp"));
    let (span, generated, prompt) = match marker {
        Marker::Plain(span) => {
            let mut read = Vec::new();
            for arg in f.sig.inputs.iter_mut().skip(1) {
                read.push(params::parse(arg)?);
            }
            (span, crate::plain::companion(self_ty, f, &read)?, false)
        }
        Marker::Prompt(span, title) => {
            (span, crate::prompt::method_prompt(self_ty, f, title)?, true)
        }
    };
    Ok(Companion {
        items: generated.0,
        ident: generated.1,
        marker: span,
        prompt,
    })
}

/// The companions' items, and the tool's `companions()` making them (nothing without any).
pub(crate) fn expand(companions: &[Companion]) -> (TokenStream, TokenStream) {
    if companions.is_empty() {
        return (quote!(), quote!());
    }
    let items = companions.iter().map(|c| &c.items);
    let added = companions.iter().map(|c| {
        let ident = &c.ident;
        let add = if c.prompt {
            quote!(prompt)
        } else {
            quote!(plain_tool)
        };
        let value = quote_spanned!(c.marker=> <Self as ::wymcp::__private::CompanionSource>::companion(self));
        quote!(.#add(#ident(#value)))
    });
    (
        quote!(#(#items)*),
        quote! {
            fn companions(&self) -> ::wymcp::tool::Companions {
                ::wymcp::tool::Companions::new() #(#added)*
            }
        },
    )
}
