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

/// Where the next page of a `tools/list` paged by
/// [`Limits::tools_per_page`](crate::Limits::tools_per_page) starts: the position in the list
/// as the caller sees it, and the name of the tool just before it (the last one served).
///
/// On the wire it is `base64url("tools:<offset>:<name>")`: opaque to the client, at most
/// [`MAX_TOOLS_CURSOR`] characters (a name is at most 128). The name makes a cursor that no
/// longer fits the list refused rather than read at a shifted place: when a session's runtime
/// tools change (the client gets `notifications/tools/list_changed`) before the cursor's
/// place, the tool at `offset - 1` is another, and the request is `-32602` telling it to list
/// again from the first page. A change after the place is simply seen in the later pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolsCursor {
    pub(crate) offset: usize,
    pub(crate) after: String,
}

/// Longest `cursor` a paged `tools/list` decodes; a longer one is refused unread.
pub(crate) const MAX_TOOLS_CURSOR: usize = 256;

impl ToolsCursor {
    /// The wire form.
    pub(crate) fn encode(offset: usize, after: &str) -> String {
        URL_SAFE_NO_PAD.encode(format!("tools:{offset}:{after}"))
    }

    /// Reads the list params' `cursor`: `None` for the first page; an unreadable or foreign
    /// cursor is `-32602` naming it.
    pub(crate) fn from_params(params: Option<&Value>) -> Result<Option<Self>, RpcError> {
        match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(cursor)) => Self::decode(cursor).map(Some).ok_or_else(|| {
                RpcError::invalid_params_reason(
                    "Invalid cursor: pass the nextCursor of a previous tools/list result, or no cursor for the first page",
                )
            }),
            Some(_) => Err(RpcError::invalid_params_reason(
                "Invalid 'cursor' in params: expected a string",
            )),
        }
    }

    fn decode(cursor: &str) -> Option<Self> {
        if cursor.len() > MAX_TOOLS_CURSOR {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
        let text = std::str::from_utf8(&bytes).ok()?;
        let rest = text.strip_prefix("tools:")?;
        let (offset, after) = rest.split_once(':')?;
        let offset: usize = offset.parse().ok()?;
        (offset > 0 && !after.is_empty()).then(|| ToolsCursor {
            offset,
            after: after.to_owned(),
        })
    }

    /// The refusal of a cursor whose place the list no longer has (the tool before it is
    /// another, or the list is shorter).
    pub(crate) fn stale() -> RpcError {
        RpcError::invalid_params_reason(
            "Stale cursor: the tool list changed since this nextCursor was given; list again without a cursor",
        )
    }
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

    #[test]
    fn a_tools_cursor_reads_back_and_refuses_forgeries() {
        let wire = ToolsCursor::encode(50, "tool_0049");
        let params = serde_json::json!({ "cursor": wire });
        let read = ToolsCursor::from_params(Some(&params)).expect("valid");
        assert_eq!(
            read,
            Some(ToolsCursor {
                offset: 50,
                after: "tool_0049".into()
            })
        );
        for forged in [
            URL_SAFE_NO_PAD.encode("prompts:50:x"),
            URL_SAFE_NO_PAD.encode("tools:0:x"),
            URL_SAFE_NO_PAD.encode("tools:50:"),
            URL_SAFE_NO_PAD.encode("tools:-1:x"),
            "x".repeat(MAX_TOOLS_CURSOR + 1),
            "not base64!".into(),
        ] {
            let params = serde_json::json!({ "cursor": forged });
            assert!(ToolsCursor::from_params(Some(&params)).is_err(), "{forged}");
        }
        assert_eq!(ToolsCursor::from_params(None).expect("none"), None);
    }
}
