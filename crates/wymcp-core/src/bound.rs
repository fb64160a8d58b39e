//! Bounded echo: the one rule for quoting a caller's input back in an error body.
//!
//! The reader of an error body is a client's LLM, and an error body may not spend its budget
//! echoing what the tool was handed. Every refusal that quotes the caller (the unknown argument
//! keys, the sent action name, unknown data paths, value problems, fault messages, help's
//! unknown tool) quotes through [`echo`] or [`echo_value`], and every quoted list is capped at
//! [`MAX_ITEMS`] with an exact count beside it. So an error body's size is bounded by a constant
//! whatever the caller sent.

use serde_json::Value;

/// At most this many Unicode scalar values of one quoted string are echoed.
pub const MAX_CHARS: usize = 200;

/// At most this many items of a quoted list are listed (with an exact count beside them).
pub const MAX_ITEMS: usize = 10;

/// Bounds one quoted string: at most [`MAX_CHARS`] characters, cut on a character boundary and
/// marked `…(+N chars)` with the number of characters left out.
///
/// `echo` is pure and total: it never fails, whatever it is given.
///
/// ```
/// use wymcp_core::bound::echo;
///
/// assert_eq!(echo("short"), "short");
/// let long = "x".repeat(250);
/// assert_eq!(echo(&long), format!("{}…(+50 chars)", "x".repeat(200)));
/// ```
pub fn echo(text: &str) -> String {
    echo_within(text, MAX_CHARS)
}

/// Bounds a text to `max_chars` characters by the rule of [`echo`]: cut on a character
/// boundary and marked `…(+N chars)` (the bound of an application's own error texts, which
/// may say more than a quote).
///
/// ```
/// use wymcp_core::bound::echo_within;
///
/// assert_eq!(echo_within("abcdef", 3), "abc…(+3 chars)");
/// assert_eq!(echo_within("abc", 3), "abc");
/// ```
pub fn echo_within(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let omitted = text[cut..].chars().count();
            format!("{}…(+{omitted} chars)", &text[..cut])
        }
    }
}

/// Bounds any JSON value: a string is echoed as itself, anything else as its compact JSON
/// rendering, then bounded like a string.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::bound::echo_value;
///
/// assert_eq!(echo_value(&json!("a")), "a");
/// assert_eq!(echo_value(&json!({"k": [1, 2]})), r#"{"k":[1,2]}"#);
/// ```
pub fn echo_value(value: &Value) -> String {
    match value {
        Value::String(s) => echo(s),
        other => {
            // Render at most a little more than the bound: a huge value is never rendered whole.
            let mut rendered = String::new();
            render_compact(other, &mut rendered, MAX_CHARS * 4 + 64);
            echo(&rendered)
        }
    }
}

/// Writes `value` as compact JSON into `out`, stopping once `out` holds more than `budget`
/// bytes, so rendering costs are bounded too.
fn render_compact(value: &Value, out: &mut String, budget: usize) {
    if out.len() > budget {
        return;
    }
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if out.len() > budget {
                    return;
                }
                if i > 0 {
                    out.push(',');
                }
                render_compact(item, out, budget);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if out.len() > budget {
                    return;
                }
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(echo(key)).to_string());
                out.push(':');
                render_compact(item, out, budget);
            }
            out.push('}');
        }
        Value::String(s) => out.push_str(&Value::String(echo(s)).to_string()),
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// At most this many levels of a JSON value [`echo_json`] keeps; a deeper value is quoted as
/// its bounded rendering ([`echo_value`]).
pub const MAX_DEPTH: usize = 8;

/// Bounds a JSON value by the rule of [`echo`], keeping its shape: every string and object key
/// through [`echo`], at most [`MAX_ITEMS`] items of an array (then the string `…(+N items)`)
/// and members of an object (then the member `"…": "(+N members)"`), and at most
/// [`MAX_DEPTH`] levels (a deeper value becomes its [`echo_value`] string). What it answers
/// is bounded by a constant whatever it is given, and so is the work: it never walks more
/// than it keeps.
///
/// ```
/// use serde_json::json;
/// use wymcp_core::bound::echo_json;
///
/// assert_eq!(echo_json(&json!({"id": 3, "tags": ["a"]})), json!({"id": 3, "tags": ["a"]}));
/// let long = json!({"name": "x".repeat(250), "list": (0..12).collect::<Vec<_>>()});
/// assert_eq!(
///     echo_json(&long),
///     json!({"list": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, "…(+2 items)"],
///            "name": format!("{}…(+50 chars)", "x".repeat(200))})
/// );
/// ```
pub fn echo_json(value: &Value) -> Value {
    echo_json_at(value, 0)
}

fn echo_json_at(value: &Value, depth: usize) -> Value {
    if depth >= MAX_DEPTH && (value.is_array() || value.is_object()) {
        return Value::String(echo_value(value));
    }
    match value {
        Value::String(text) => Value::String(echo(text)),
        Value::Array(items) => {
            let mut kept: Vec<Value> = items
                .iter()
                .take(MAX_ITEMS)
                .map(|item| echo_json_at(item, depth + 1))
                .collect();
            if items.len() > MAX_ITEMS {
                kept.push(Value::String(format!(
                    "…(+{} items)",
                    items.len() - MAX_ITEMS
                )));
            }
            Value::Array(kept)
        }
        Value::Object(members) => Value::Object(echo_members(members, depth)),
        scalar => scalar.clone(),
    }
}

/// The members of an object at `depth`, bounded by the rule of [`echo_json`].
pub(crate) fn echo_members(
    members: &serde_json::Map<String, Value>,
    depth: usize,
) -> serde_json::Map<String, Value> {
    let mut kept: serde_json::Map<String, Value> = members
        .iter()
        .take(MAX_ITEMS)
        .map(|(key, item)| (echo(key), echo_json_at(item, depth + 1)))
        .collect();
    if members.len() > MAX_ITEMS {
        let left = members.len() - MAX_ITEMS;
        kept.insert("…".into(), Value::String(format!("(+{left} members)")));
    }
    kept
}

/// Bounds a list of quoted strings: the first [`MAX_ITEMS`] of `items` (already in the order
/// they are to be listed), each through [`echo`].
pub fn echo_list<'a>(items: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    items.into_iter().take(MAX_ITEMS).map(echo).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cuts_on_char_boundaries() {
        let s = "é".repeat(300);
        let bounded = echo(&s);
        assert!(bounded.starts_with(&"é".repeat(200)));
        assert!(bounded.ends_with("…(+100 chars)"));
    }

    #[test]
    fn exactly_at_the_bound_is_unchanged() {
        let s = "a".repeat(MAX_CHARS);
        assert_eq!(echo(&s), s);
    }

    #[test]
    fn huge_values_render_bounded() {
        let big = json!({"k": "x".repeat(1_000_000), "list": vec![1; 100_000]});
        assert!(echo_value(&big).chars().count() <= MAX_CHARS + 20);
    }

    #[test]
    fn a_deep_or_wide_value_is_kept_bounded() {
        let mut deep = json!("x".repeat(10_000));
        for _ in 0..1_000 {
            deep = json!([deep]);
        }
        let wide: serde_json::Map<String, Value> = (0..10_000)
            .map(|i| (format!("k{i:05}"), json!(i)))
            .collect();
        for value in [deep, Value::Object(wide)] {
            let bounded = echo_json(&value).to_string();
            assert!(bounded.len() < 3 * MAX_CHARS + 200, "{}", bounded.len());
        }
    }

    #[test]
    fn list_is_capped() {
        let keys: Vec<String> = (0..50).map(|i| format!("k{i}")).collect();
        assert_eq!(echo_list(keys.iter().map(String::as_str)).len(), MAX_ITEMS);
    }
}
