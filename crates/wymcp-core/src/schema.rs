//! Whole schemas a tool declares beside its actions: the output schema and a plain tool's input
//! schema, each built once as a JSON Schema and stored.

use serde_json::{Map, Value};

use crate::bound;
use crate::error::Problem;
use crate::excerpt::Excerpts;
use crate::keyset;
use crate::value_gate::ValueGate;

/// Builds an output schema. Refused: a schema whose `type` is not `"object"` (MCP requires
/// it), a `type` naming no type, a `$ref` to a location the schema
/// does not hold, any remote `$ref` (never fetched), an unknown format.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::schema::build_output_schema;
///
/// let ok = json!({"type": "object", "properties": {"count": {"type": "integer"}}});
/// assert!(build_output_schema(ok.as_object().unwrap()).is_ok());
/// let remote = json!({"type": "object", "$ref": "https://example.com/s.json"});
/// assert!(build_output_schema(remote.as_object().unwrap()).is_err());
/// ```
pub fn build_output_schema(schema: &Map<String, Value>) -> Result<ValueGate, Problem> {
    // MCP requires an output schema to describe an object (structuredContent is one).
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        other => {
            return Err(Problem::OutputSchemaNotObject(
                other
                    .map(bound::echo_value)
                    .unwrap_or_else(|| "no type".into()),
            ));
        }
    }
    ValueGate::for_schema(Value::Object(schema.clone())).map_err(Problem::OutputSchemaBuild)
}

/// Checks a tool's annotations against MCP's `ToolAnnotations`: `title` is a string and
/// `readOnlyHint`, `destructiveHint`, `idempotentHint` and `openWorldHint` are booleans. Other
/// keys are served as declared (the schema leaves `ToolAnnotations` open).
///
/// ```
/// use serde_json::json;
/// use wymcp_core::schema::check_annotations;
///
/// let ok = json!({"readOnlyHint": true, "title": "Read tasks", "x-team": "ops"});
/// assert!(check_annotations(ok.as_object().unwrap()).is_ok());
/// let bad = json!({"readOnlyHint": "yes"});
/// assert_eq!(
///     check_annotations(bad.as_object().unwrap()).unwrap_err().to_string(),
///     r#"annotation "readOnlyHint" must be a boolean, got yes"#
/// );
/// ```
pub fn check_annotations(annotations: &Map<String, Value>) -> Result<(), Problem> {
    const BOOLEANS: [&str; 4] = [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ];
    for (key, value) in annotations {
        let expected = match key.as_str() {
            "title" if !value.is_string() => "a string",
            hint if BOOLEANS.contains(&hint) && !value.is_boolean() => "a boolean",
            _ => continue,
        };
        return Err(Problem::AnnotationType {
            key: key.clone(),
            expected,
            got: bound::echo_value(value),
        });
    }
    Ok(())
}

/// A plain tool's input schema, validated: the gate compiled from it and the schema as published
/// (the unknown-key gate's closure written out).
#[derive(Debug)]
pub struct InputSchema {
    gate: ValueGate,
    published: Map<String, Value>,
    excerpts: Excerpts,
}

impl InputSchema {
    /// Validates and builds a plain tool's input schema: an object schema (`"type": "object"`),
    /// well-shaped along the unknown-key gate's keywords, that builds as a JSON Schema.
    pub fn build(schema: &Map<String, Value>) -> Result<Self, Problem> {
        match schema.get("type") {
            Some(Value::String(t)) if t == "object" => {}
            other => {
                return Err(Problem::InputSchemaNotObject(
                    other
                        .map(bound::echo_value)
                        .unwrap_or_else(|| "no type".into()),
                ));
            }
        }
        if let Some(problem) = keyset::whole_schema_offence(&Value::Object(schema.clone())) {
            return Err(problem);
        }
        check_header_params(schema)?;
        let gate = ValueGate::for_schema(Value::Object(schema.clone()))
            .map_err(Problem::InputSchemaBuild)?;
        let published = match keyset::close_schema(&Value::Object(schema.clone())) {
            Value::Object(map) => map,
            _ => schema.clone(),
        };
        let excerpts = Excerpts::of(gate.schema());
        Ok(InputSchema {
            gate,
            published,
            excerpts,
        })
    }

    /// The compiled gate (unknown keys are read from [`schema`](ValueGate::schema)).
    pub fn value_gate(&self) -> &ValueGate {
        &self.gate
    }

    /// The excerpts of its property schemas a value or required-key refusal quotes (cut once,
    /// here).
    pub fn excerpts(&self) -> &Excerpts {
        &self.excerpts
    }

    /// The schema as published in help and refusals, closure written out.
    pub fn published(&self) -> &Map<String, Value> {
        &self.published
    }
}

/// Checks the `x-mcp-header` annotations (SEP-2243) of an input schema's top-level properties,
/// which the 2026-07-28 HTTP transport mirrors in `Mcp-Param-<name>` headers. A client must drop
/// a tool whose annotation is invalid, so one is refused here: the value must be a non-empty
/// HTTP field-name token (RFC 9110 `tchar`: ASCII letters, digits and ``!#$%&'*+-.^_`|~``), on
/// a property of type `string`, `integer` or `boolean`, and unique case-insensitively.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::schema::check_header_params;
///
/// let ok = json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"},
///     "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"}
/// }});
/// assert!(check_header_params(ok.as_object().unwrap()).is_ok());
/// let spaced = json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "My Region"}
/// }});
/// assert_eq!(
///     check_header_params(spaced.as_object().unwrap()).unwrap_err().to_string(),
///     "property \"region\": x-mcp-header \"My Region\" must be an HTTP field-name token \
///      (ASCII letters, digits and !#$%&'*+-.^_`|~)"
/// );
/// ```
pub fn check_header_params(schema: &Map<String, Value>) -> Result<(), Problem> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    let mut seen: Vec<(String, &str)> = Vec::new();
    for (property, declared) in properties {
        let Some(header) = declared.get("x-mcp-header") else {
            continue;
        };
        let invalid = |reason| Problem::InvalidHeaderParam {
            property: property.clone(),
            header: bound::echo_value(header).into(),
            reason,
        };
        let name = match header.as_str() {
            Some(name) if !name.is_empty() => name,
            _ => return Err(invalid("must be a non-empty string")),
        };
        if !name.bytes().all(is_tchar) {
            return Err(invalid(
                "must be an HTTP field-name token (ASCII letters, digits and !#$%&'*+-.^_`|~)",
            ));
        }
        if !matches!(
            declared.get("type").and_then(Value::as_str),
            Some("string" | "integer" | "boolean")
        ) {
            return Err(invalid(
                "is allowed only on a property of type string, integer or boolean",
            ));
        }
        let folded = name.to_ascii_lowercase();
        if let Some((_, first)) = seen.iter().find(|(other, _)| *other == folded) {
            return Err(Problem::DuplicateHeaderParam {
                property: property.clone(),
                header: name.into(),
                first: (*first).into(),
            });
        }
        seen.push((folded, property));
    }
    Ok(())
}

/// An RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
