//! The action enum of a `#[wymcp::tool]` block (`Notes` → `NotesAction`, one variant per
//! action), generated when the block's `hints` or `action_context` takes it instead of the
//! action's name: those methods then match exhaustively, with no `_ => unreachable!()`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{FnArg, ImplItemFn, Type};

/// The enum's name for the block's type.
pub(crate) fn enum_ident(self_ty: &Type) -> Option<syn::Ident> {
    match self_ty {
        Type::Path(path) => path
            .path
            .segments
            .last()
            .map(|s| format_ident!("{}Action", s.ident)),
        _ => None,
    }
}

/// Whether `method`'s first parameter after `&self` is the action enum.
pub(crate) fn takes_enum(method: &ImplItemFn, name: &syn::Ident) -> bool {
    match method.sig.inputs.iter().nth(1) {
        Some(FnArg::Typed(arg)) => {
            matches!(&*arg.ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == *name))
        }
        _ => false,
    }
}

/// `snake_case` → `SnakeCase`.
fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect::<String>()
            })
        })
        .collect()
}

/// The enum: one variant per action (in declaration order), with `name` and `from_name`.
pub(crate) fn definition(name: &syn::Ident, actions: &[(String, syn::Ident)]) -> TokenStream {
    let variants: Vec<syn::Ident> = actions
        .iter()
        .map(|(_, method)| {
            format_ident!("{}", camel_case(&method.to_string()), span = method.span())
        })
        .collect();
    let names: Vec<&String> = actions.iter().map(|(n, _)| n).collect();
    let docs = actions.iter().map(|(n, _)| format!("The `{n}` action."));
    let doc = format!("The actions of the `{name}` tool, one variant per action method.");
    quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(unreachable_pub)]
        pub enum #name {
            #(#[doc = #docs] #variants,)*
        }

        impl #name {
            /// The action's name, as served.
            #[allow(unreachable_pub, dead_code)]
            pub fn name(self) -> &'static str {
                match self { #(Self::#variants => #names,)* }
            }

            /// The action named `name`, if the tool has one.
            #[allow(unreachable_pub, dead_code)]
            pub fn from_name(name: &str) -> ::core::option::Option<Self> {
                match name {
                    #(#names => ::core::option::Option::Some(Self::#variants),)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    }
}

/// `ActionTool::hints` or `ActionTool::action_context` calling the block's method with the
/// action enum (an unknown name, which the gates never pass, gets no hints or context).
pub(crate) fn typed_forward(method: &syn::Ident, name: &syn::Ident) -> TokenStream {
    let value = quote!(::wymcp::__private::serde_json::Value);
    let map = quote!(::wymcp::__private::serde_json::Map<::std::string::String, #value>);
    let call =
        |args: TokenStream| quote_spanned!(method.span()=> Self::#method(self, action, #args));
    if method == "hints" {
        let call = call(quote!(hint_context));
        quote! {
            fn hints(&self, action: &str, hint_context: &#value) -> ::std::vec::Vec<::wymcp::Hint> {
                match #name::from_name(action) {
                    ::core::option::Option::Some(action) => #call,
                    ::core::option::Option::None => ::std::vec::Vec::new(),
                }
            }
        }
    } else {
        let call = call(quote!(ctx));
        quote! {
            fn action_context(&self, action: &str, ctx: &::wymcp::Context) -> ::core::option::Option<#map> {
                match #name::from_name(action) {
                    ::core::option::Option::Some(action) => #call,
                    ::core::option::Option::None => ::core::option::Option::None,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::camel_case;

    #[test]
    fn action_names_become_variant_names() {
        assert_eq!(camel_case("add"), "Add");
        assert_eq!(camel_case("get_by_id"), "GetById");
    }
}
