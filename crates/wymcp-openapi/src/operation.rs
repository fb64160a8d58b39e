//! One OpenAPI operation: how a call's `data` becomes an HTTP request, and the action schema
//! the gates check `data` against.

use serde_json::{Map, Value, json};

use crate::error::LoadError;
use crate::schema::{Resolver, normalize};

/// The HTTP methods a path item may declare operations for, in the order actions are listed.
pub(crate) const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The key of `data` that carries the request body.
pub(crate) const BODY: &str = "body";

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

/// How a query parameter's array or object is written (OpenAPI `style`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
    Simple,
}

#[derive(Debug, Clone)]
pub(crate) struct Parameter {
    pub(crate) name: String,
    pub(crate) location: Location,
    pub(crate) style: Style,
    pub(crate) explode: bool,
}

/// An operation ready to be called: its method, path template and parameters.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    pub(crate) action: String,
    pub(crate) method: reqwest::Method,
    pub(crate) path: String,
    pub(crate) parameters: Vec<Parameter>,
    pub(crate) has_body: bool,
    /// The action schema (wymcp's vocabulary).
    pub(crate) schema: Value,
    pub(crate) tag: Option<String>,
}

/// What reading one operation gave: an operation, or why it cannot be one (not fatal).
pub(crate) enum Read {
    Operation(Operation),
    Skipped(String),
}

/// The limits that bound reading one operation.
pub(crate) struct Bounds {
    pub(crate) max_ref_depth: usize,
    pub(crate) max_schema_bytes: usize,
}

/// Reads the operation `method` of the path item `item` at `path`. Errors are fatal to the
/// load (a limit, a dangling reference); `Read::Skipped` is an operation that cannot be served.
pub(crate) fn read(
    document: &Value,
    path: &str,
    method: &str,
    item: &Map<String, Value>,
    operation: &Map<String, Value>,
    bounds: &Bounds,
) -> Result<Read, LoadError> {
    let action = match operation.get("operationId").and_then(Value::as_str) {
        Some(id) if !id.trim().is_empty() => sanitize(id),
        _ => derived_name(method, path),
    };
    let label = format!("{} {path} ({action})", method.to_uppercase());
    let mut resolver = Resolver::new(
        document,
        &label,
        bounds.max_ref_depth,
        bounds.max_schema_bytes,
    );

    // Path-level parameters, overridden by the operation's own of the same name and location.
    let mut declared: Vec<Value> = Vec::new();
    for list in [item.get("parameters"), operation.get("parameters")]
        .into_iter()
        .flatten()
    {
        let Value::Array(list) = list else { continue };
        for parameter in list {
            let parameter = resolver.resolve(parameter)?;
            let key = (parameter.get("name").cloned(), parameter.get("in").cloned());
            declared.retain(|p| (p.get("name").cloned(), p.get("in").cloned()) != key);
            declared.push(parameter);
        }
    }

    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut parameters = Vec::new();
    for parameter in &declared {
        let (Some(name), Some(location)) = (
            parameter.get("name").and_then(Value::as_str),
            parameter.get("in").and_then(Value::as_str),
        ) else {
            return Ok(Read::Skipped(
                "a parameter without a name or location".into(),
            ));
        };
        let location = match location {
            "path" => Location::Path,
            "query" => Location::Query,
            "header" => Location::Header,
            "cookie" => Location::Cookie,
            other => {
                return Ok(Read::Skipped(format!(
                    "parameter {name} is in {other:?}, not path, query, header or cookie"
                )));
            }
        };
        if location == Location::Header
            && ["accept", "content-type", "authorization"]
                .contains(&name.to_ascii_lowercase().as_str())
        {
            // OpenAPI: these header parameters are ignored (the client sets them).
            continue;
        }
        if properties.contains_key(name) || name == BODY {
            return Ok(Read::Skipped(format!(
                "parameter name {name:?} is used twice (in two locations, or as the body's key `body`)"
            )));
        }
        let mut schema = parameter
            .get("schema")
            .or_else(|| parameter.pointer("/content").and_then(first_media_schema))
            .cloned()
            .unwrap_or_else(|| json!({"type": "string"}));
        normalize(&mut schema, true);
        if let (Value::Object(map), Some(Value::String(description))) =
            (&mut schema, parameter.get("description"))
        {
            map.entry("description")
                .or_insert_with(|| Value::String(description.clone()));
        }
        properties.insert(name.to_owned(), schema);
        if location == Location::Path || parameter.get("required") == Some(&Value::Bool(true)) {
            required.push(name.to_owned());
        }
        let style = match parameter.get("style").and_then(Value::as_str) {
            Some("spaceDelimited") => Style::SpaceDelimited,
            Some("pipeDelimited") => Style::PipeDelimited,
            Some("deepObject") => Style::DeepObject,
            Some("form") => Style::Form,
            Some("simple") => Style::Simple,
            Some(other) => {
                return Ok(Read::Skipped(format!(
                    "parameter {name} has style {other:?}, which is not supported"
                )));
            }
            None if matches!(location, Location::Query | Location::Cookie) => Style::Form,
            None => Style::Simple,
        };
        let explode = parameter
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(style == Style::Form);
        parameters.push(Parameter {
            name: name.to_owned(),
            location,
            style,
            explode,
        });
    }
    for name in parameters
        .iter()
        .filter(|p| p.location == Location::Path)
        .map(|p| &p.name)
    {
        if !path.contains(&format!("{{{name}}}")) {
            return Ok(Read::Skipped(format!(
                "path parameter {name} is not in the path"
            )));
        }
    }

    let mut has_body = false;
    // An optional body wymcp cannot send (not JSON): the operation is served without it, and
    // its notes say so, so that neither the model nor the operator takes it for sent.
    let mut unsent_body = None;
    if let Some(body) = operation.get("requestBody") {
        let body = resolver.resolve(body)?;
        let body_required = body.get("required") == Some(&Value::Bool(true));
        match body.get("content").and_then(json_media_schema) {
            Some(schema) => {
                let mut schema = schema.clone();
                normalize(&mut schema, true);
                if let (Value::Object(map), Some(Value::String(description))) =
                    (&mut schema, body.get("description"))
                {
                    map.entry("description")
                        .or_insert_with(|| Value::String(description.clone()));
                }
                properties.insert(BODY.into(), schema);
                if body_required {
                    required.push(BODY.into());
                }
                has_body = true;
            }
            None => {
                let types: Vec<&str> = body
                    .get("content")
                    .and_then(Value::as_object)
                    .map(|c| c.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                if body_required {
                    return Ok(Read::Skipped(format!(
                        "its required request body is {}, not JSON",
                        types.join(", ")
                    )));
                }
                unsent_body = Some(format!(
                    "Its optional request body ({}) is not sent: only JSON bodies are.",
                    types.join(", ")
                ));
            }
        }
    }

    let summary = one_line(operation.get("summary"));
    let long = operation
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let http = format!("HTTP {} {path}", method.to_uppercase());
    let description = summary
        .clone()
        .or_else(|| one_line(operation.get("description")))
        .unwrap_or_else(|| http.clone());
    let mut notes = match (summary, long) {
        (Some(_), Some(long)) => format!("{http}\n\n{long}"),
        _ => http,
    };
    if let Some(unsent) = unsent_body {
        notes.push_str("\n\n");
        notes.push_str(&unsent);
    }
    if let Some(answer) = answer_note(document, &label, operation, bounds) {
        notes.push_str("\n\n");
        notes.push_str(&answer);
    }
    let mut schema = json!({
        "description": description,
        "properties": properties,
        "notes": notes,
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    if let Err(problem) = wymcp_core::validate_action(&action, &schema) {
        return Ok(Read::Skipped(format!(
            "wymcp refuses its action schema: {problem}"
        )));
    }
    let tag = operation
        .get("tags")
        .and_then(|t| t.get(0))
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(Read::Operation(Operation {
        action,
        method: method
            .to_uppercase()
            .parse()
            .unwrap_or(reqwest::Method::GET),
        path: path.to_owned(),
        parameters,
        has_body,
        schema,
        tag,
    }))
}

/// The first line of a string field, trimmed, when not empty.
/// The most of an answer's schema `help` quotes whole (compact JSON bytes); a larger one is
/// summarized by its top-level properties.
const MAX_ANSWER_SCHEMA: usize = 1024;
/// The most property names a summarized answer lists.
const MAX_ANSWER_KEYS: usize = 24;

/// What the action's `help` says it answers: the operation's first success response with a
/// JSON body (`200`, `201`, ..., then `2XX`), its schema resolved and normalized as a request's
/// are, quoted whole up to [`MAX_ANSWER_SCHEMA`] bytes, else by its top-level properties.
/// MCP gives a tool one `outputSchema` (here the reply's envelope, `{status, body}`), so an
/// operation's own answer shape reaches the model through its action's help. `None` when no
/// success answer is JSON, or its schema cannot be read within the operation's bounds (an
/// answer the model is not told about; the load goes on).
fn answer_note(
    document: &Value,
    label: &str,
    operation: &Map<String, Value>,
    bounds: &Bounds,
) -> Option<String> {
    let responses = operation.get("responses")?.as_object()?;
    let mut codes: Vec<&String> = responses.keys().filter(|c| c.starts_with('2')).collect();
    // `200` before `201` before `2XX`: digits sort before `X`.
    codes.sort();
    let mut resolver = Resolver::new(
        document,
        label,
        bounds.max_ref_depth,
        bounds.max_schema_bytes,
    );
    for code in codes {
        let Ok(response) = resolver.resolve(&responses[code]) else {
            return None;
        };
        let Some(schema) = response.get("content").and_then(json_media_schema) else {
            continue;
        };
        let mut schema = schema.clone();
        normalize(&mut schema, false);
        let text = schema.to_string();
        if text.len() <= MAX_ANSWER_SCHEMA {
            return Some(format!("Answers {code} with JSON of the schema {text}"));
        }
        return Some(format!(
            "Answers {code} with {}",
            shape(&schema, text.len())
        ));
    }
    None
}

/// A large answer schema in a line: an object's (or an array of objects') first property
/// names, and the schema's size.
fn shape(schema: &Value, bytes: usize) -> String {
    let (what, object) = match schema.get("type").and_then(Value::as_str) {
        Some("array") => ("a JSON array of objects", schema.get("items")),
        _ => ("a JSON object", Some(schema)),
    };
    let names: Vec<&str> = object
        .and_then(|o| o.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if names.is_empty() {
        return format!("JSON (its schema is {bytes} bytes; see the API's document)");
    }
    let more = names.len().saturating_sub(MAX_ANSWER_KEYS);
    let listed = names[..names.len().min(MAX_ANSWER_KEYS)].join(", ");
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!("{what} with {listed}{more} (its schema is {bytes} bytes; see the API's document)")
}

fn one_line(value: Option<&Value>) -> Option<String> {
    let text = value?.as_str()?.trim();
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

/// The schema of the JSON media type of a `content` map (`application/json`, else any
/// `*/*+json` or `*/json`).
fn json_media_schema(content: &Value) -> Option<&Value> {
    let content = content.as_object()?;
    let json = content.get("application/json").or_else(|| {
        content
            .iter()
            .find(|(media, _)| {
                let media = media.split(';').next().unwrap_or_default().trim();
                media.ends_with("+json") || media.ends_with("/json")
            })
            .map(|(_, v)| v)
    })?;
    Some(json.get("schema").unwrap_or(&Value::Bool(true)))
}

/// The schema of a parameter's `content` (its one media type).
fn first_media_schema(content: &Value) -> Option<&Value> {
    content.as_object()?.values().next()?.get("schema")
}

/// A stable name for an operation without `operationId`: the method and the path's segments,
/// `{id}` read as `by_id` (`GET /pets/{id}` is `get_pets_by_id`).
pub(crate) fn derived_name(method: &str, path: &str) -> String {
    let mut name = method.to_ascii_lowercase();
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        name.push('_');
        match segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(parameter) => {
                name.push_str("by_");
                name.push_str(&sanitize(parameter));
            }
            None => name.push_str(&sanitize(segment)),
        }
    }
    name
}

/// An operation id or path segment as an action name: letters, digits and `_`, `-`, `.`
/// kept, anything else `_`.
pub(crate) fn sanitize(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_derive_from_method_and_path() {
        assert_eq!(derived_name("GET", "/pets/{id}"), "get_pets_by_id");
        assert_eq!(
            derived_name("delete", "/stores/{store-id}/orders"),
            "delete_stores_by_store-id_orders"
        );
        assert_eq!(derived_name("get", "/"), "get");
    }
}
