//! `key = <JSON>, flag, ...` lists, as `#[wymcp(...)]` and `#[wymcp::tool(...)]` write them.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{Attribute, Meta};

use crate::json::{self, Node};

/// One entry: its key, and its value when written (`key = value`), or none (`flag`).
pub(crate) struct Entry {
    pub(crate) key: Ident,
    pub(crate) value: Option<Node>,
}

impl Entry {
    pub(crate) fn name(&self) -> String {
        self.key.to_string()
    }

    pub(crate) fn span(&self) -> Span {
        self.key.span()
    }
}

/// The entries of `tokens`, each checked against `known` (the refusal lists them).
pub(crate) fn entries(tokens: TokenStream, known: &[&str]) -> syn::Result<Vec<Entry>> {
    let mut tokens = tokens.into_iter().peekable();
    let mut out = Vec::new();
    while let Some(key) = tokens.next() {
        let TokenTree::Ident(key) = key else {
            return Err(syn::Error::new(key.span(), "expected a key"));
        };
        let name = key.to_string();
        if !known.contains(&name.as_str()) {
            return Err(syn::Error::new(
                key.span(),
                format!(
                    "unknown wymcp attribute `{name}`; known: {}",
                    known.join(", ")
                ),
            ));
        }
        let value = match tokens.peek() {
            Some(TokenTree::Punct(p)) if p.as_char() == '=' => {
                tokens.next();
                let mut value = TokenStream::new();
                while let Some(t) = tokens.peek() {
                    if matches!(t, TokenTree::Punct(p) if p.as_char() == ',') {
                        break;
                    }
                    value.extend(tokens.next());
                }
                if value.is_empty() {
                    return Err(syn::Error::new(
                        key.span(),
                        format!("expected `{name} = <value>`"),
                    ));
                }
                Some(json::parse(value)?)
            }
            _ => None,
        };
        match tokens.next() {
            None => {}
            Some(TokenTree::Punct(p)) if p.as_char() == ',' => {}
            Some(other) => {
                return Err(syn::Error::new(
                    other.span(),
                    "expected `,` between wymcp attributes",
                ));
            }
        }
        out.push(Entry { key, value });
    }
    Ok(out)
}

/// The entries of every `#[wymcp(...)]` among `attrs`.
pub(crate) fn wymcp_entries(attrs: &[Attribute], known: &[&str]) -> syn::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("wymcp")) {
        let Meta::List(list) = &attr.meta else {
            return Err(syn::Error::new(
                attr.span(),
                "expected `#[wymcp(key = value, ...)]`",
            ));
        };
        out.extend(entries(list.tokens.clone(), known)?);
    }
    Ok(out)
}

/// The text of the `///` doc comments among `attrs`, one entry per line with the span of its
/// attribute, the one leading space rustdoc strips removed.
pub(crate) fn doc_lines(attrs: &[Attribute]) -> Vec<(String, Span)> {
    let mut lines = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("doc")) {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) = &nv.value
        else {
            continue;
        };
        for line in s.value().split('\n') {
            let line = line.strip_prefix(' ').unwrap_or(line).trim_end();
            lines.push((line.to_owned(), attr.span()));
        }
    }
    lines
}

/// The doc comment as one text: lines joined by newlines, blank lines at either end removed.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<(String, Span)> {
    let lines = doc_lines(attrs);
    let first = lines.iter().position(|(l, _)| !l.trim().is_empty())?;
    let last = lines.iter().rposition(|(l, _)| !l.trim().is_empty())?;
    let span = lines[first].1;
    let text: Vec<&str> = lines[first..=last]
        .iter()
        .map(|(l, _)| l.as_str())
        .collect();
    Some((text.join("\n"), span))
}
