//! Opaque pagination cursors for the `*/list` methods.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use crate::protocol::RpcError;

/// The page size when the builder sets none.
pub(crate) const DEFAULT_PAGE_SIZE: usize = 50;

/// One page of `items`: the list params' `cursor` decoded (an invalid one is `-32602`), the
/// items of the page, and the cursor of the next page when there is one.
pub(crate) fn page<'a, T>(
    items: &'a [T],
    params: &Map<String, Value>,
    page_size: usize,
    kind: &str,
) -> Result<(&'a [T], Option<String>), RpcError> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => decode(cursor, kind)
            .filter(|&offset| offset <= items.len())
            .ok_or_else(|| {
                RpcError::invalid_params_reason(format!(
                    "Invalid cursor: pass the nextCursor of a previous {kind}/list result, or no cursor for the first page"
                ))
            })?,
        Some(_) => {
            return Err(RpcError::invalid_params_reason(
                "Invalid 'cursor' in params: expected a string",
            ));
        }
    };
    let size = page_size.max(1);
    let end = start.saturating_add(size).min(items.len());
    let next = (end < items.len()).then(|| encode(end, kind));
    Ok((&items[start..end], next))
}

/// The result of a `*/list` request: one page of `items` (see [`page`]), each rendered, under
/// `field`, with `nextCursor` when more follow.
pub(crate) fn listed<T>(
    items: &[T],
    params: &Map<String, Value>,
    page_size: usize,
    (kind, field): (&str, &str),
    render: impl Fn(&T) -> Value,
) -> Result<Value, RpcError> {
    let (page, next) = page(items, params, page_size, kind)?;
    let mut result = Map::new();
    result.insert(field.into(), page.iter().map(render).collect());
    if let Some(next) = next {
        result.insert("nextCursor".into(), Value::String(next));
    }
    Ok(Value::Object(result))
}

/// Reads `params` as the protocol layer receives them: absent or `null` is `{}`.
pub(crate) fn params_object(params: Option<Value>) -> Result<Map<String, Value>, RpcError> {
    match params {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(RpcError::invalid_params_reason("params must be an object")),
    }
}

fn encode(offset: usize, kind: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("{kind}:{offset}"))
}

fn decode(cursor: &str, kind: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (k, offset) = text.split_once(':')?;
    if k != kind {
        return None;
    }
    offset.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_refuses_foreign_cursors() {
        let items: Vec<u32> = (0..5).collect();
        let none = Map::new();
        let (first, next) = page(&items, &none, 2, "resources").expect("first page");
        assert_eq!(first, [0, 1]);
        let mut params = Map::new();
        params.insert("cursor".into(), Value::String(next.expect("more")));
        let (second, _) = page(&items, &params, 2, "resources").expect("second page");
        assert_eq!(second, [2, 3]);
        assert!(page(&items, &params, 2, "prompts").is_err());
        params.insert("cursor".into(), Value::String("garbage!".into()));
        assert!(page(&items, &params, 2, "resources").is_err());
    }
}
