//! The property names of a `#[wymcp::data]` struct, known while the crate compiles, so that a
//! typed action's `required_one_of` and examples naming a property the struct lacks fail the
//! build at the token instead of at `build()`.
//!
//! `#[wymcp::data]` records the names serde gives the fields (`rename`, `rename_all`, `skip`
//! honoured) as an inherent `__WYMCP_FIELDS` const; anything it cannot read for sure (a
//! flattened field, another serde attribute that renames, a generic struct) records none,
//! and the check is left to `build()`. The check resolves `T::__WYMCP_FIELDS`, the inherent
//! const when there is one, the `NoFields` trait's `None` otherwise: a struct deriving by hand
//! is never refused here.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::{Attribute, Data, DeriveInput, Fields, Meta};

/// The inherent const recording `input`'s property names, when they are known for sure.
pub(crate) fn record(input: &DeriveInput) -> TokenStream {
    let Some(names) = property_names(input) else {
        return quote!();
    };
    let ident = &input.ident;
    quote! {
        impl #ident {
            #[doc(hidden)]
            #[allow(unreachable_pub, dead_code)]
            pub const __WYMCP_FIELDS: ::core::option::Option<&'static [&'static str]> =
                ::core::option::Option::Some(&[#(#names),*]);
        }
    }
}

fn property_names(input: &DeriveInput) -> Option<Vec<String>> {
    if !input.generics.params.is_empty() {
        return None;
    }
    let Data::Struct(data) = &input.data else {
        return None;
    };
    let Fields::Named(fields) = &data.fields else {
        return None;
    };
    let mut rename_all = None;
    for (key, value) in serde_entries(&input.attrs)? {
        match (key.as_str(), value) {
            ("rename_all", Some(rule)) => rename_all = Some(rule),
            ("deny_unknown_fields" | "default", _) => {}
            _ => return None,
        }
    }
    let mut names = Vec::new();
    for field in &fields.named {
        let ident = field.ident.as_ref()?.to_string();
        let ident = ident.strip_prefix("r#").unwrap_or(&ident).to_owned();
        let mut name = match &rename_all {
            Some(rule) => rename(&ident, rule)?,
            None => ident,
        };
        for (key, value) in serde_entries(&field.attrs)? {
            match (key.as_str(), value) {
                ("rename", Some(value)) => name = value,
                ("skip" | "skip_deserializing", None) => name.clear(),
                ("default" | "skip_serializing" | "skip_serializing_if" | "with", _) => {}
                ("deserialize_with" | "serialize_with", _) => {}
                _ => return None,
            }
        }
        if !name.is_empty() {
            names.push(name);
        }
    }
    Some(names)
}

/// The `key` or `key = "value"` entries of the `#[serde(...)]` attributes; `None` for one it
/// cannot read.
fn serde_entries(attrs: &[Attribute]) -> Option<Vec<(String, Option<String>)>> {
    let mut entries = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let Meta::List(list) = &attr.meta else {
            return None;
        };
        let parsed = list
            .parse_args_with(syn::punctuated::Punctuated::<Meta, syn::Token![,]>::parse_terminated)
            .ok()?;
        for meta in parsed {
            let key = meta.path().get_ident()?.to_string();
            let value = match &meta {
                Meta::Path(_) => None,
                Meta::NameValue(nv) => match &nv.value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => Some(s.value()),
                    _ => return None,
                },
                Meta::List(_) => return None,
            };
            entries.push((key, value));
        }
    }
    Some(entries)
}

/// A field name under a serde `rename_all` rule; `None` for a rule it does not know.
fn rename(field: &str, rule: &str) -> Option<String> {
    let words: Vec<&str> = field.split('_').filter(|w| !w.is_empty()).collect();
    let capitalized = |w: &str| {
        let mut chars = w.chars();
        chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect::<String>())
            .unwrap_or_default()
    };
    Some(match rule {
        "lowercase" => field.to_lowercase(),
        "UPPERCASE" => field.to_uppercase(),
        "snake_case" => field.to_owned(),
        "SCREAMING_SNAKE_CASE" => field.to_uppercase(),
        "kebab-case" => field.replace('_', "-"),
        "SCREAMING-KEBAB-CASE" => field.replace('_', "-").to_uppercase(),
        "PascalCase" => words.iter().map(|w| capitalized(w)).collect(),
        "camelCase" => {
            let mut out = words.first().map(|w| (*w).to_owned()).unwrap_or_default();
            out.extend(words.iter().skip(1).map(|w| capitalized(w)));
            out
        }
        _ => return None,
    })
}

/// A compile-time check that `ty` (a `#[wymcp::data]` struct) has the property `name`, which
/// `what` (`"required_one_of"`, `"an example"`) names at `span`.
pub(crate) fn check(ty: &syn::Type, name: &str, what: &str, span: Span) -> TokenStream {
    let type_name = quote!(#ty).to_string().replace(' ', "");
    let message = format!(
        "{what} names {name:?}, which is not a property of `{type_name}` (its fields, as serde names them)"
    );
    quote_spanned! {span=>
        const _: () = {
            #[allow(unused_imports)]
            use ::wymcp::__private::NoFields as _;
            if !::wymcp::__private::has_field(<#ty>::__WYMCP_FIELDS, #name) {
                ::core::panic!(#message);
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::{property_names, rename};

    fn names(item: &str) -> Option<Vec<String>> {
        property_names(&syn::parse_str(item).expect("an item"))
    }

    #[test]
    fn serde_renames_are_followed() {
        assert_eq!(
            rename("project_key", "camelCase").as_deref(),
            Some("projectKey")
        );
        assert_eq!(
            rename("project_key", "PascalCase").as_deref(),
            Some("ProjectKey")
        );
        assert_eq!(
            rename("project_key", "kebab-case").as_deref(),
            Some("project-key")
        );
        assert_eq!(
            names(
                r#"#[serde(rename_all = "camelCase")] struct S { project_key: String, #[serde(rename = "n")] number: u32, #[serde(skip)] cache: u8 }"#
            ),
            Some(vec!["projectKey".to_owned(), "n".to_owned()])
        );
    }

    #[test]
    fn what_cannot_be_read_for_sure_records_nothing() {
        assert_eq!(names("struct S { #[serde(flatten)] rest: Extra }"), None);
        assert_eq!(names("struct S<T> { t: T }"), None);
        assert_eq!(names("enum E { A }"), None);
        assert_eq!(names(r#"#[serde(tag = "kind")] struct S { a: u8 }"#), None);
        assert_eq!(
            names(r#"#[serde(deny_unknown_fields)] struct S { a: u8 }"#),
            Some(vec!["a".to_owned()])
        );
    }
}
