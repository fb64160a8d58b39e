//! What a refused macro still emits beside its error, so that the error is the only one: the
//! user's item (its wymcp attributes removed) and a stub of the trait the macro would have
//! implemented. Without them, every use of the type would add a follow-on E0277 or E0599
//! pointing away from the offending token. The stubs never run: the crate does not compile.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, ImplItem, ItemFn, ItemImpl};

/// The stub `ActionEnum` of a refused derive (an enum without generics only).
pub(crate) fn action_enum(input: &syn::DeriveInput) -> TokenStream {
    if !matches!(input.data, syn::Data::Enum(_)) || !input.generics.params.is_empty() {
        return quote!();
    }
    let ident = &input.ident;
    quote! {
        impl ::wymcp::ActionEnum for #ident {
            fn actions() -> ::wymcp::Actions { ::wymcp::Actions::new() }
            fn from_action(action: &str, _: ::wymcp::Data)
                -> ::core::result::Result<Self, ::wymcp::ActionError> {
                ::core::result::Result::Err(::wymcp::__private::unknown_action(action))
            }
            fn action_name(&self) -> &'static str { "" }
        }
    }
}

/// Which trait a refused attribute would have implemented.
#[derive(Clone, Copy)]
pub(crate) enum Stub {
    ActionTool,
    PlainTool,
    /// None (`#[wymcp::resources]` adds inherent methods only).
    Nothing,
}

/// The user's `impl` block, its wymcp attributes and parameter docs removed, and a stub of
/// the trait the attribute would have implemented for its type.
pub(crate) fn impl_block(item: TokenStream, stub: Stub) -> TokenStream {
    let Ok(mut block) = syn::parse2::<ItemImpl>(item) else {
        return quote!();
    };
    for item in &mut block.items {
        if let ImplItem::Fn(f) = item {
            f.attrs.retain(|a| !a.path().is_ident("wymcp"));
            for arg in &mut f.sig.inputs {
                if let FnArg::Typed(arg) = arg {
                    arg.attrs
                        .retain(|a| !a.path().is_ident("wymcp") && !a.path().is_ident("doc"));
                }
            }
        }
    }
    if block.trait_.is_some() || !block.generics.params.is_empty() {
        return quote!(#block);
    }
    let plain = match stub {
        Stub::ActionTool => false,
        Stub::PlainTool => true,
        Stub::Nothing => return quote!(#block),
    };
    let self_ty = &block.self_ty;
    let map = quote!(::wymcp::__private::serde_json::Map<::std::string::String, ::wymcp::__private::serde_json::Value>);
    let stub = if plain {
        quote! {
            impl ::wymcp::PlainTool for #self_ty {
                fn name(&self) -> &str { "" }
                fn description(&self) -> &str { "" }
                fn input_schema(&self) -> #map { ::core::default::Default::default() }
                async fn run(&self, _: #map, _: ::wymcp::Context) -> ::wymcp::CallResult {
                    ::core::result::Result::Err(::wymcp::CallError::tool(""))
                }
            }
        }
    } else {
        quote! {
            impl ::wymcp::ActionTool for #self_ty {
                fn name(&self) -> &str { "" }
                fn description(&self) -> &str { "" }
                fn actions(&self) -> ::wymcp::Actions { ::wymcp::Actions::new() }
                async fn run_action(&self, action: &str, _: ::wymcp::Data, _: ::wymcp::Context)
                    -> ::wymcp::ActionResult {
                    ::core::result::Result::Err(::wymcp::tool::Failure::new(
                        ::wymcp::__private::unknown_action(action),
                    ))
                }
            }
        }
    };
    quote!(#block #stub)
}

/// The unit struct a refused `#[wymcp::prompt]` would have made of the function, with a stub
/// `Prompt`, so that `.prompt(summarize)` adds no "cannot find value" error. A method (a
/// `self` receiver) or an unreadable item gets none: the function stays where it was.
pub(crate) fn prompt(item: TokenStream) -> TokenStream {
    let Ok(function) = syn::parse2::<ItemFn>(item) else {
        return quote!();
    };
    if matches!(function.sig.inputs.first(), Some(FnArg::Receiver(_))) {
        return quote!();
    }
    let ident = &function.sig.ident;
    let vis = &function.vis;
    quote! {
        #[allow(non_camel_case_types, dead_code)]
        #[derive(Debug, Clone, Copy, Default)]
        #vis struct #ident;

        impl ::wymcp::Prompt for #ident {
            fn name(&self) -> &str { "" }
            async fn get(&self, _: ::wymcp::prompt::PromptArguments, _: ::wymcp::Context)
                -> ::core::result::Result<::wymcp::prompt::GetPromptResult, ::wymcp::prompt::PromptError> {
                ::core::result::Result::Err(::wymcp::prompt::PromptError::Failed(::std::string::String::new()))
            }
        }
    }
}
