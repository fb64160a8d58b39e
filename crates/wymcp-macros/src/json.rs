//! JSON written as Rust tokens, parsed with the span of every token kept, so a refusal can
//! point at the offending one.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use serde_json::{Map, Number, Value};

/// A JSON value with the span of the tokens that wrote it.
#[derive(Clone)]
pub(crate) enum Node {
    Scalar(Value, Span),
    Array(Vec<Node>, Span),
    Object(Vec<(String, Span, Node)>, Span),
}

impl Node {
    pub(crate) fn span(&self) -> Span {
        match self {
            Node::Scalar(_, s) | Node::Array(_, s) | Node::Object(_, s) => *s,
        }
    }

    pub(crate) fn to_value(&self) -> Value {
        match self {
            Node::Scalar(v, _) => v.clone(),
            Node::Array(items, _) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(entries, _) => {
                let mut map = Map::new();
                for (k, _, v) in entries {
                    map.insert(k.clone(), v.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// The entry `key` of an object node: (key span, value node).
    pub(crate) fn get(&self, key: &str) -> Option<(Span, &Node)> {
        match self {
            Node::Object(entries, _) => entries
                .iter()
                .find(|(k, _, _)| k == key)
                .map(|(_, s, v)| (*s, v)),
            _ => None,
        }
    }
}

pub(crate) fn parse(tokens: TokenStream) -> syn::Result<Node> {
    let mut iter = tokens.into_iter().peekable();
    let node = parse_value(&mut iter, Span::call_site())?;
    if let Some(extra) = iter.next() {
        return Err(syn::Error::new(
            extra.span(),
            "unexpected token after the JSON value",
        ));
    }
    Ok(node)
}

type Tokens = std::iter::Peekable<proc_macro2::token_stream::IntoIter>;

fn parse_value(iter: &mut Tokens, at: Span) -> syn::Result<Node> {
    let Some(token) = iter.next() else {
        return Err(syn::Error::new(at, "expected a JSON value"));
    };
    match token {
        TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => {
            parse_object(g.stream(), g.span())
        }
        TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
            let mut items = Vec::new();
            let mut inner = g.stream().into_iter().peekable();
            while inner.peek().is_some() {
                items.push(parse_value(&mut inner, g.span())?);
                expect_comma(&mut inner)?;
            }
            Ok(Node::Array(items, g.span()))
        }
        TokenTree::Ident(i) => match i.to_string().as_str() {
            "null" => Ok(Node::Scalar(Value::Null, i.span())),
            "true" => Ok(Node::Scalar(Value::Bool(true), i.span())),
            "false" => Ok(Node::Scalar(Value::Bool(false), i.span())),
            other => Err(syn::Error::new(
                i.span(),
                format!("expected a JSON value, found `{other}`"),
            )),
        },
        TokenTree::Punct(p) if p.as_char() == '-' => match iter.next() {
            Some(TokenTree::Literal(lit)) => number(&format!("-{lit}"), p.span()),
            _ => Err(syn::Error::new(p.span(), "expected a number after `-`")),
        },
        TokenTree::Literal(lit) => {
            let text = lit.to_string();
            if text.starts_with('"') || text.starts_with('r') {
                let s: syn::LitStr = syn::parse_str(&text)?;
                Ok(Node::Scalar(Value::String(s.value()), lit.span()))
            } else {
                number(&text, lit.span())
            }
        }
        other => Err(syn::Error::new(other.span(), "expected a JSON value")),
    }
}

fn number(text: &str, span: Span) -> syn::Result<Node> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let value: Value = serde_json::from_str(&clean)
        .ok()
        .filter(Value::is_number)
        .ok_or_else(|| syn::Error::new(span, format!("`{text}` is not a JSON number")))?;
    let _: &Number = value
        .as_number()
        .ok_or_else(|| syn::Error::new(span, "not a number"))?;
    Ok(Node::Scalar(value, span))
}

fn parse_object(stream: TokenStream, span: Span) -> syn::Result<Node> {
    let mut entries: Vec<(String, Span, Node)> = Vec::new();
    let mut iter = stream.into_iter().peekable();
    while let Some(key) = iter.next() {
        let (name, key_span) = match &key {
            TokenTree::Literal(lit) => {
                let s: syn::LitStr = syn::parse_str(&lit.to_string())
                    .map_err(|_| syn::Error::new(lit.span(), "an object key must be a string"))?;
                (s.value(), lit.span())
            }
            TokenTree::Ident(i) => (i.to_string(), i.span()),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "an object key must be a string",
                ));
            }
        };
        match iter.next() {
            Some(TokenTree::Punct(p)) if p.as_char() == ':' => {}
            _ => return Err(syn::Error::new(key_span, "expected `:` after the key")),
        }
        let value = parse_value(&mut iter, key_span)?;
        if entries.iter().any(|(k, _, _)| *k == name) {
            return Err(syn::Error::new(key_span, format!("duplicate key {name:?}")));
        }
        entries.push((name, key_span, value));
        expect_comma(&mut iter)?;
    }
    Ok(Node::Object(entries, span))
}

fn expect_comma(iter: &mut Tokens) -> syn::Result<()> {
    match iter.next() {
        None => Ok(()),
        Some(TokenTree::Punct(p)) if p.as_char() == ',' => Ok(()),
        Some(other) => Err(syn::Error::new(other.span(), "expected `,`")),
    }
}
