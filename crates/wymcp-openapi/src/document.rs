//! The document as JSON: parsed (JSON or YAML), its version checked, its remote references
//! refused, its base URL read.

use serde_json::Value;

use crate::error::LoadError;

/// Parses a document: JSON when it starts with `{`, YAML otherwise.
pub(crate) fn parse(text: &str) -> Result<Value, LoadError> {
    if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| LoadError::Parse {
            format: "JSON",
            message: e.to_string(),
        })
    } else {
        serde_norway::from_str(text).map_err(|e| LoadError::Parse {
            format: "YAML",
            message: e.to_string(),
        })
    }
}

/// Refuses anything but OpenAPI 3.0.x and 3.1.x.
pub(crate) fn check_version(document: &Value) -> Result<(), LoadError> {
    match document.get("openapi").and_then(Value::as_str) {
        Some(v) if v.starts_with("3.0") || v.starts_with("3.1") => Ok(()),
        Some(v) => Err(LoadError::UnsupportedVersion {
            found: format!("openapi: {v:?}"),
        }),
        None => Err(LoadError::UnsupportedVersion {
            found: match document.get("swagger") {
                Some(v) => format!("swagger: {v} (Swagger 2.0: convert it to OpenAPI 3)"),
                None => "no `openapi` field".into(),
            },
        }),
    }
}

/// Refuses the first `$ref` anywhere in the document that does not point inside it.
pub(crate) fn refuse_remote_refs(value: &Value, at: &mut String) -> Result<(), LoadError> {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get("$ref") {
                if !reference.starts_with('#') {
                    return Err(LoadError::RemoteRef {
                        at: format!("{at}/$ref"),
                        reference: reference.clone(),
                    });
                }
            }
            for (key, child) in map {
                let len = at.len();
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                refuse_remote_refs(child, at)?;
                at.truncate(len);
            }
            Ok(())
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let len = at.len();
                at.push('/');
                at.push_str(&i.to_string());
                refuse_remote_refs(child, at)?;
                at.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The absolute base URL of `servers[0]`, its variables filled in with their defaults; or what
/// the document offered instead.
pub(crate) fn server_url(document: &Value) -> Result<String, String> {
    let (template, url) = first_server(document)?;
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(format!("servers[0].url is {template:?}"))
    }
}

/// `servers[0].url` when it is relative (`/v3`, `v3`), its variables filled in: a document
/// fetched from a URL is resolved against it.
pub(crate) fn relative_server_url(document: &Value) -> Option<String> {
    let (_, url) = first_server(document).ok()?;
    (!url.contains("://")).then_some(url)
}

/// `servers[0].url` as written, and with its variables' defaults filled in.
fn first_server(document: &Value) -> Result<(String, String), String> {
    let Some(server) = document.pointer("/servers/0") else {
        return Err("no servers".into());
    };
    let Some(template) = server.get("url").and_then(Value::as_str) else {
        return Err("servers[0] has no url".into());
    };
    let mut url = template.to_owned();
    if let Some(Value::Object(variables)) = server.get("variables") {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    Ok((template.to_owned(), url))
}
