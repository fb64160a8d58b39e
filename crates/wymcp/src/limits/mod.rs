//! [`Limits`](crate::Limits): what one client may make the serving core spend, bounded and configurable.
//!
//! Every bound here has a safe default, applies to both eras and both transports, and is
//! refused with an answer that names it (see `docs/limits.md`). The transports add the bounds
//! of their own framing (the HTTP body limit and connection timeouts, the stdio line limit).

use std::time::Duration;

/// Default most messages in one JSON-RPC batch (2025-03-26 sessions).
pub const DEFAULT_MAX_BATCH: usize = 100;
/// Default largest `initialize` params, in bytes of compact JSON: 64 KiB.
pub const DEFAULT_MAX_INITIALIZE_PARAMS: usize = 64 * 1024;
/// Default most calls running at once in one session (or one stdio connection).
pub const DEFAULT_MAX_CALLS_PER_SESSION: usize = 64;
/// Default most resource subscriptions of one session.
pub const DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION: usize = 1_000;
/// Default most resource subscriptions of all sessions together.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 100_000;
/// Default most live sessions one principal (or, without auth, one client address) holds.
pub const DEFAULT_MAX_SESSIONS_PER_CLIENT: usize = 1_000;
/// Default longest a call may run before it is aborted: 5 minutes.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(5 * 60);
/// Default most characters of a tool's, prompt's, resource's or completion's own error text.
pub const DEFAULT_MAX_ERROR_TEXT: usize = 2_000;
/// Default most hints one answer carries.
pub const DEFAULT_MAX_HINTS: usize = 10;
/// Default most events kept for replay per session (Streamable HTTP's event log).
pub const DEFAULT_MAX_LOGGED_EVENTS: usize = 1_000;
/// Default most bytes of events kept for replay per session: 1 MiB.
pub const DEFAULT_MAX_LOGGED_BYTES: usize = 1024 * 1024;
/// Default most bytes of events the in-memory event log keeps for all sessions together:
/// 256 MiB.
pub const DEFAULT_MAX_LOGGED_BYTES_TOTAL: usize = 256 * 1024 * 1024;
/// Default most weight of what `initialize` keeps (the client's capabilities and info) for all
/// live sessions of a server together: 256 MiB (see [`json_weight`]'s measure).
pub const DEFAULT_MAX_INITIALIZE_PARAMS_TOTAL: usize = 256 * 1024 * 1024;
/// Most resource URIs one `subscriptions/listen` stream may list, unless set.
pub const DEFAULT_MAX_LISTEN_URIS: usize = 1_000;
/// Most task ids one `subscriptions/listen` stream may list, unless set (each is read from the
/// task store when the stream opens).
pub const DEFAULT_MAX_LISTEN_TASK_IDS: usize = 100;
/// Default longest URI, in bytes, matched against a resource template: 8 KiB.
pub const DEFAULT_MAX_TEMPLATE_URI: usize = 8 * 1024;
/// Default most steps of one reading's search when a URI is matched against a template.
pub const DEFAULT_MAX_TEMPLATE_MATCH_STEPS: usize = 100_000;
/// Default most actions a `missing_action` or `unknown_action` refusal lists with their
/// signatures.
pub const DEFAULT_MAX_LISTED_ACTIONS: usize = 20;
/// Default most characters of each listed action's signature, and of its description, in a
/// `missing_action` or `unknown_action` refusal.
pub const DEFAULT_MAX_ACTION_SIGNATURE: usize = 200;
/// Default most notes (progress, log messages) queued for one call's stream when its client
/// reads slower than the tool sends.
pub const DEFAULT_MAX_QUEUED_NOTES: usize = 256;
/// Default most values of a property's `enum` a value or required-key refusal lists in its
/// `schemas` excerpt.
pub const DEFAULT_MAX_LISTED_ENUM_VALUES: usize = 10;

// `Limits` itself, at the crate root (`wymcp::Limits`): this module holds its defaults.
pub(crate) mod values;

/// Whether `value`'s compact JSON is longer than `max` bytes; stops writing once it is.
pub(crate) fn json_longer_than(value: &serde_json::Value, max: usize) -> bool {
    struct Budget(usize);
    impl std::io::Write for Budget {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self
                .0
                .checked_sub(buf.len())
                .ok_or_else(|| std::io::Error::other("over budget"))?;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    serde_json::to_writer(Budget(max), value).is_err()
}

/// What a parsed JSON value costs beyond its text, per value (a `Value`, a map entry and its
/// key), as [`json_weight`] counts it.
pub const WEIGHT_PER_VALUE: usize = 64;

/// The weight of a parsed JSON value as the server-wide byte budgets count it
/// ([`Limits::max_initialize_params_total`](crate::Limits::max_initialize_params_total),
/// `wymcp-redis`'s decoded-record cache): its compact JSON bytes plus [`WEIGHT_PER_VALUE`] for
/// each value in it, about what it takes in memory parsed (a 64 KiB object of 7,701
/// one-letter keys weighs about 1 MB).
///
/// ```
/// use serde_json::json;
/// // 9 bytes of text (`{"a":[1]}`), three values (the object, the array, the number).
/// assert_eq!(wymcp::limits::json_weight(&json!({"a": [1]})), 9 + 3 * 64);
/// ```
pub fn json_weight(value: &serde_json::Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    fn values(value: &serde_json::Value) -> usize {
        // Iterative: a value nested deeper than the stack is not a reason to stop counting.
        let mut stack = vec![value];
        let mut count = 0usize;
        while let Some(value) = stack.pop() {
            count += 1;
            match value {
                serde_json::Value::Array(items) => stack.extend(items),
                serde_json::Value::Object(members) => stack.extend(members.values()),
                _ => {}
            }
        }
        count
    }
    let mut text = Counter(0);
    // Writing a `Value` into a counter cannot fail.
    let _ = serde_json::to_writer(&mut text, value);
    text.0
        .saturating_add(values(value).saturating_mul(WEIGHT_PER_VALUE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;
    use serde_json::json;

    #[test]
    fn json_length_is_measured_compact_and_stops_at_the_bound() {
        let value = json!({"a": [1, 2], "b": "x"});
        assert_eq!(value.to_string(), r#"{"a":[1,2],"b":"x"}"#);
        assert!(!json_longer_than(&value, 19));
        assert!(json_longer_than(&value, 18));
    }

    #[test]
    fn a_value_weighs_its_text_and_64_bytes_per_value() {
        // Three values (the object, the array, the number) and 9 bytes of text (`{"a":[1]}`).
        assert_eq!(json_weight(&json!({"a": [1]})), 9 + 3 * WEIGHT_PER_VALUE);
        assert_eq!(json_weight(&json!({})), 2 + WEIGHT_PER_VALUE);
    }

    #[test]
    fn error_texts_are_cut_at_the_limit_and_say_how_much_was_left_out() {
        let limits = Limits::default().max_error_text(5);
        assert_eq!(limits.error_text("short".into()), "short");
        assert_eq!(limits.error_text("longer text".into()), "longe…(+6 chars)");
    }
}
