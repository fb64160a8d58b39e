//! An action method's parameters: the `Context`, one `Params<T>` struct, or properties, each
//! with the JSON Schema its Rust type stands for.
//!
//! The schema of a property whose type is written with the standard types (`String`, `bool`,
//! the integers and floats, `Option`, `Vec`, sets, maps keyed by `String`, `serde_json::Value`,
//! `Box`) is derived here, so the whole action is validated while the user's crate compiles;
//! any other type's schema comes from its `JsonSchema` impl when the server is built, and
//! `build()` validates it.

use proc_macro2::Span;
use serde_json::{Value, json};
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Pat, PathArguments, Type};

use crate::attrs::{self, Entry};
use crate::json::Node;

/// The JSON Schema keywords a parameter's `#[wymcp(...)]` writes into its property schema.
const KEYWORDS: [&str; 14] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "enum",
    "const",
    "minItems",
    "maxItems",
    "uniqueItems",
];

/// The keys a parameter's `#[wymcp(...)]` accepts besides the keywords.
const PARAM_KEYS: [&str; 3] = ["default", "description", "schema"];

/// One parameter of an action method (the receiver aside).
pub(crate) enum Param {
    /// `ctx: Context` (by value) or `ctx: &Context`.
    Context { by_ref: bool, span: Span },
    /// `Params(x): Params<T>`: the data is `T`.
    Params { inner: Box<Type>, span: Span },
    /// A property of the data.
    Property(Box<Property>),
}

/// A parameter that is one property of the action's data.
pub(crate) struct Property {
    /// The property's name: the parameter's.
    pub(crate) name: String,
    pub(crate) span: Span,
    /// The declared type (what the argument is deserialized into).
    pub(crate) ty: Type,
    pub(crate) optional: bool,
    /// The schema derived from the type; `None` when only its `JsonSchema` impl knows it.
    pub(crate) derived: Option<Value>,
    /// The type whose `JsonSchema` gives the schema at run time (the `Option`'s inner type).
    pub(crate) schema_type: Type,
    pub(crate) default: Option<Node>,
    /// The description and keywords written over the derived schema, with their tokens.
    pub(crate) overlay: Vec<(String, Span, Node)>,
}

impl Param {
    /// Where the parameter is written (its pattern).
    pub(crate) fn span(&self) -> Span {
        match self {
            Param::Context { span, .. } | Param::Params { span, .. } => *span,
            Param::Property(p) => p.span,
        }
    }
}

impl Property {
    /// Required: neither an `Option` nor defaulted.
    pub(crate) fn required(&self) -> bool {
        !self.optional && self.default.is_none()
    }

    /// The property schema as known at compile time (`{}` standing in for a runtime one),
    /// with the spans of what wrote it: the type for the derived part, the attribute for the
    /// rest.
    pub(crate) fn schema_node(&self) -> Node {
        let type_span = self.ty.span();
        let mut entries = match self.derived.as_ref().map(|v| node_of(v, type_span)) {
            Some(Node::Object(entries, _)) => entries,
            _ => Vec::new(),
        };
        for (key, span, node) in &self.overlay {
            entries.retain(|(k, _, _)| k != key);
            entries.push((key.clone(), *span, node.clone()));
        }
        Node::Object(entries, type_span)
    }

    /// The overlay alone, as JSON (written over the runtime schema).
    pub(crate) fn overlay_value(&self) -> Value {
        Node::Object(self.overlay.clone(), self.span).to_value()
    }
}

/// Reads one parameter, taking its `#[wymcp(...)]` and doc attributes (they are not Rust's).
pub(crate) fn parse(arg: &mut FnArg) -> syn::Result<Param> {
    let FnArg::Typed(arg) = arg else {
        return Err(syn::Error::new(arg.span(), "an action takes `&self`"));
    };
    let entries = attrs::wymcp_entries(&arg.attrs, &[&PARAM_KEYS[..], &KEYWORDS[..]].concat())?;
    let doc = attrs::doc_text(&arg.attrs);
    arg.attrs
        .retain(|a| !a.path().is_ident("wymcp") && !a.path().is_ident("doc"));
    let ty = (*arg.ty).clone();
    if is_context(&ty) || matches!(&ty, Type::Reference(r) if is_context(&r.elem)) {
        refuse_attributes(&entries, "the `Context`")?;
        return Ok(Param::Context {
            by_ref: matches!(ty, Type::Reference(_)),
            span: arg.pat.span(),
        });
    }
    if let Some(inner) = single_argument(&ty, "Params") {
        refuse_attributes(
            &entries,
            "`Params<T>` (annotate the struct's fields instead)",
        )?;
        return Ok(Param::Params {
            inner: Box::new(inner.clone()),
            span: arg.pat.span(),
        });
    }
    property(arg, ty, entries, doc)
}

/// A parameter that is one property of the action's data: a name, an owned type (`Option`:
/// optional), its doc the property's description, its entries the schema's keywords.
fn property(
    arg: &syn::PatType,
    ty: Type,
    entries: Vec<Entry>,
    doc: Option<(String, Span)>,
) -> syn::Result<Param> {
    if let Type::Reference(reference) = &ty {
        return Err(syn::Error::new(
            reference.span(),
            "an action's parameter owns its value: take `String` for `&str`, `Vec<T>` for `&[T]` (only `&Context` is borrowed)",
        ));
    }
    let Pat::Ident(pat) = &*arg.pat else {
        return Err(syn::Error::new(
            arg.pat.span(),
            "a property parameter is a name (`text: String`); take one struct as `Params(x): Params<T>`",
        ));
    };
    let name = pat.ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name).to_owned();
    let (optional, schema_type) = match single_argument(&ty, "Option") {
        Some(inner) => (true, inner.clone()),
        None => (false, ty.clone()),
    };
    let mut property = Property {
        name,
        span: pat.ident.span(),
        derived: derive_schema(&schema_type),
        ty,
        optional,
        schema_type,
        default: None,
        overlay: Vec::new(),
    };
    if let Some((text, span)) = doc {
        property.overlay.push((
            "description".into(),
            span,
            Node::Scalar(Value::String(text), span),
        ));
    }
    for entry in entries {
        read_entry(&mut property, entry)?;
    }
    Ok(Param::Property(Box::new(property)))
}

fn refuse_attributes(entries: &[Entry], what: &str) -> syn::Result<()> {
    match entries.first() {
        Some(entry) => Err(syn::Error::new(
            entry.span(),
            format!("`#[wymcp({})]` does not apply to {what}", entry.name()),
        )),
        None => Ok(()),
    }
}

fn read_entry(property: &mut Property, entry: Entry) -> syn::Result<()> {
    let name = entry.name();
    let span = entry.span();
    let Some(value) = entry.value else {
        return Err(syn::Error::new(
            span,
            format!("expected `{name} = <value>`"),
        ));
    };
    match name.as_str() {
        "default" => {
            if property.default.is_some() {
                return Err(syn::Error::new(span, "default given twice"));
            }
            property.default = Some(value);
        }
        "schema" => {
            let Node::Object(entries, _) = value else {
                return Err(syn::Error::new(
                    value.span(),
                    "schema takes a JSON object, written over the property's schema: `schema = {\"minLength\": 1}`",
                ));
            };
            for (key, key_span, node) in entries {
                property.overlay.retain(|(k, _, _)| *k != key);
                property.overlay.push((key, key_span, node));
            }
        }
        _ => {
            if property.overlay.iter().any(|(k, _, _)| *k == name) {
                return Err(syn::Error::new(span, format!("{name} given twice")));
            }
            property.overlay.push((name, span, value));
        }
    }
    Ok(())
}

/// A JSON value as a node whose every part has `span`.
fn node_of(value: &Value, span: Span) -> Node {
    match value {
        Value::Array(items) => Node::Array(items.iter().map(|v| node_of(v, span)).collect(), span),
        Value::Object(map) => Node::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), span, node_of(v, span)))
                .collect(),
            span,
        ),
        scalar => Node::Scalar(scalar.clone(), span),
    }
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Paren(inner) => last_segment(&inner.elem),
        _ => None,
    }
}

fn is_context(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "Context" && s.arguments.is_empty())
}

/// The type arguments of the path type `ty`.
fn type_arguments(ty: &Type) -> Vec<&Type> {
    match last_segment(ty).map(|s| &s.arguments) {
        Some(PathArguments::AngleBracketed(args)) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `T` when `ty` is `<name><T>`.
pub(crate) fn single_argument<'t>(ty: &'t Type, name: &str) -> Option<&'t Type> {
    let segment = last_segment(ty)?;
    match type_arguments(ty).as_slice() {
        [inner] if segment.ident == name => Some(inner),
        _ => None,
    }
}

/// Whether a method's return type is one of the answer types `names` (the last path segment
/// of a `Result`, `ActionResult`, `Reply`, ...), converted by wymcp's answer traits. Any
/// other type is the answer itself, a success: the generated call wraps it in
/// `Ok::<_, Failure>`, so `-> Note` serves `Note` as JSON.
pub(crate) fn is_answer_type(ty: &Type, names: &[&str]) -> bool {
    last_segment(ty).is_some_and(|segment| names.iter().any(|name| segment.ident == name))
}

/// `T` when `ty` is `<name><T, ...>`.
pub(crate) fn single_or_first_argument<'t>(ty: &'t Type, name: &str) -> Option<&'t Type> {
    let segment = last_segment(ty)?;
    (segment.ident == name)
        .then(|| type_arguments(ty).into_iter().next())
        .flatten()
}

/// The JSON Schema of a type written with the standard types, as schemars writes it for
/// typed actions (integer widths as `minimum`/`maximum`); `None` for any other type.
pub(crate) fn derive_schema(ty: &Type) -> Option<Value> {
    derive(ty, Widths::AsBounds)
}

/// [`derive_schema`] for an answer's type (an `outputSchema`): integers without the bounds
/// of their width, which the type itself guarantees and a reader of `tools/list` does not
/// need (as the runtime's `tidy_output` does for schemars' schemas).
pub(crate) fn derive_output_schema(ty: &Type) -> Option<Value> {
    derive(ty, Widths::Dropped)
}

/// Whether an integer's schema states its width as `minimum`/`maximum`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Widths {
    AsBounds,
    Dropped,
}

fn derive(ty: &Type, widths: Widths) -> Option<Value> {
    let segment = last_segment(ty)?;
    let args = type_arguments(ty);
    let name = segment.ident.to_string();
    let derive_schema = |ty: &Type| derive(ty, widths);
    let integer = |min: i128, max: i128| {
        let bound = |n: i128| match i64::try_from(n) {
            Ok(n) => Value::from(n),
            Err(_) => Value::from(n as u64),
        };
        match widths {
            Widths::AsBounds => {
                json!({"type": "integer", "minimum": bound(min), "maximum": bound(max)})
            }
            Widths::Dropped => json!({"type": "integer"}),
        }
    };
    let schema = match (name.as_str(), args.as_slice()) {
        ("String", []) => json!({"type": "string"}),
        ("char", []) => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        ("bool", []) => json!({"type": "boolean"}),
        ("f32" | "f64", []) => json!({"type": "number"}),
        ("u8", []) => integer(0, u8::MAX.into()),
        ("u16", []) => integer(0, u16::MAX.into()),
        ("u32", []) => integer(0, u32::MAX.into()),
        ("u64", []) => integer(0, u64::MAX.into()),
        ("usize", []) => integer(0, usize::MAX as i128),
        ("i8", []) => integer(i8::MIN.into(), i8::MAX.into()),
        ("i16", []) => integer(i16::MIN.into(), i16::MAX.into()),
        ("i32", []) => integer(i32::MIN.into(), i32::MAX.into()),
        ("i64", []) => integer(i64::MIN.into(), i64::MAX.into()),
        ("isize", []) => integer(isize::MIN as i128, isize::MAX as i128),
        ("Value", []) => json!({}),
        ("Vec" | "VecDeque", [item]) => json!({"type": "array", "items": derive_schema(item)?}),
        ("HashSet" | "BTreeSet", [item]) => {
            json!({"type": "array", "items": derive_schema(item)?, "uniqueItems": true})
        }
        ("HashMap" | "BTreeMap", [key, value]) if last_segment(key)?.ident == "String" => {
            json!({"type": "object", "additionalProperties": derive_schema(value)?})
        }
        ("Box" | "Arc" | "Rc", [inner]) => derive_schema(inner)?,
        _ => return None,
    };
    Some(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::derive_schema;

    fn schema(ty: &str) -> Option<serde_json::Value> {
        derive_schema(&syn::parse_str(ty).expect("a type"))
    }

    #[test]
    fn an_answers_integers_carry_no_width() {
        let ty = syn::parse_str("BTreeMap<String, Vec<u32>>").expect("a type");
        assert_eq!(
            super::derive_output_schema(&ty),
            Some(json!({"type": "object", "additionalProperties":
                {"type": "array", "items": {"type": "integer"}}}))
        );
    }

    #[test]
    fn standard_types_have_their_schema_derived() {
        assert_eq!(schema("String"), Some(json!({"type": "string"})));
        assert_eq!(
            schema("u8"),
            Some(json!({"type": "integer", "minimum": 0, "maximum": 255}))
        );
        assert_eq!(
            schema("u64"),
            Some(json!({"type": "integer", "minimum": 0, "maximum": u64::MAX}))
        );
        assert_eq!(
            schema("std::collections::BTreeSet<i8>"),
            Some(json!({"type": "array", "uniqueItems": true,
                        "items": {"type": "integer", "minimum": -128, "maximum": 127}}))
        );
        assert_eq!(
            schema("HashMap<String, Vec<bool>>"),
            Some(json!({"type": "object",
                        "additionalProperties": {"type": "array", "items": {"type": "boolean"}}}))
        );
        assert_eq!(schema("serde_json::Value"), Some(json!({})));
    }

    #[test]
    fn other_types_are_left_to_their_json_schema_impl() {
        assert_eq!(schema("Priority"), None);
        assert_eq!(schema("Vec<Priority>"), None);
        assert_eq!(schema("HashMap<u32, String>"), None);
        assert_eq!(schema("&str"), None);
    }
}
