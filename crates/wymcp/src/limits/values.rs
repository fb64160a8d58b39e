//! [`Limits`]: the values, their setters and what the core reads of them.

use std::collections::HashMap;
use std::time::Duration;

use super::*;

/// The serving core's limits. Build one with [`Limits::default`] and the setters, and give it
/// to [`ServerBuilder::limits`](crate::ServerBuilder::limits).
///
/// ```
/// use std::time::Duration;
/// use wymcp::{Limits, Server};
///
/// let limits = Limits::default()
///     .max_batch(20)
///     .call_timeout(Duration::from_secs(30))
///     .tool_call_timeout("import", Duration::from_secs(600));
/// let server = Server::builder().limits(limits).build().unwrap();
/// assert_eq!(server.limits().max_batch, 20);
/// assert_eq!(server.limits().timeout_for("import"), Some(Duration::from_secs(600)));
/// assert_eq!(server.limits().timeout_for("other"), Some(Duration::from_secs(30)));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Limits {
    /// Most messages in one batch; a larger batch is refused whole (`-32600`, naming the
    /// limit) before any of it runs.
    pub max_batch: usize,
    /// Largest `initialize` params in bytes of compact JSON; a larger `initialize` is refused
    /// (`-32602`) and no session is created.
    pub max_initialize_params: usize,
    /// Most weight of what `initialize` keeps for all live sessions of the server together
    /// (each session's client capabilities and client info, weighed as their compact JSON
    /// bytes plus 64 bytes per JSON value, about their cost in memory); one more session that
    /// would pass it is refused (503, naming the limit) until sessions end.
    pub max_initialize_params_total: usize,
    /// Most calls running at once in one session (stdio: on one connection); one more is
    /// refused (`-32000`, naming the limit) until one ends.
    pub max_calls_per_session: usize,
    /// Most resource subscriptions of one session; one more is refused (`-32602`).
    pub max_subscriptions_per_session: usize,
    /// Most resource subscriptions of all sessions together; one more is refused (`-32602`).
    pub max_subscriptions: usize,
    /// Most live sessions of one principal, or of one client address when there is no auth
    /// (a loopback address is not counted: behind a reverse proxy every client shares it);
    /// one more `initialize` is refused (503) while the others live.
    pub max_sessions_per_client: usize,
    /// Longest a call may run (`None`: no limit); a call still running then is aborted and
    /// answered with a `timeout` tool error.
    pub call_timeout: Option<Duration>,
    /// Per-tool call timeouts, overriding [`call_timeout`](Self::call_timeout).
    pub tool_call_timeouts: HashMap<String, Duration>,
    /// Most characters of an error text written by the application (a tool's `Err`,
    /// `handle_error`, prompt, resource and completion errors); longer texts are cut and
    /// marked `…(+N chars)`.
    pub max_error_text: usize,
    /// Most hints one answer carries (a tool's `hints` for its reply or its failure); the
    /// rest are left out and counted in `hints_omitted`. Each hint is bounded as a refusal's
    /// quotes are: names and example strings by the bounded echo, the description by
    /// [`max_error_text`](Self::max_error_text).
    pub max_hints: usize,
    /// Most events a session's event log keeps for `Last-Event-ID` replay (oldest dropped).
    pub max_logged_events: usize,
    /// Most notes (progress notifications, log messages) queued for one call's stream while
    /// its client has not read them: when full, the oldest notification is dropped for the
    /// newest (so the last progress is the one kept); a server→client request is never
    /// dropped.
    pub max_queued_notes: usize,
    /// Most bytes of events a session's event log keeps (oldest dropped).
    pub max_logged_bytes: usize,
    /// Most bytes of events the default in-memory event log keeps for all sessions together:
    /// past it, a session's own oldest events make room for its new one; a session with none
    /// to give has its new event sent live but not logged (not resumable), with a warning
    /// naming the limit.
    pub max_logged_bytes_total: usize,
    /// Most URIs one `subscriptions/listen` stream's `resourceSubscriptions` may list; a
    /// longer list is refused (`-32602`, naming the limit).
    pub max_listen_uris: usize,
    /// Most task ids one `subscriptions/listen` stream's `taskIds` may list; a longer list is
    /// refused (`-32602`, naming the limit).
    pub max_listen_task_ids: usize,
    /// Longest URI, in bytes, that `resources/read` and `resources/subscribe` match against
    /// the resource templates; a longer one matches none (`Resource not found`, naming the
    /// limit).
    pub max_template_uri: usize,
    /// Most places one reading of a template match tries an expression's end at (a URI built
    /// to make the search explore, `{a}{b}{c}z` against thousands of `x`s, stops there and
    /// matches that template not: `Resource not found`, naming the limit).
    pub max_template_match_steps: usize,
    /// Most actions a `missing_action` or `unknown_action` refusal lists in `actions` with
    /// their descriptions and signatures (the likeliest first); the others are counted in
    /// `actions_omitted`. `valid_actions` still names them all.
    pub max_listed_actions: usize,
    /// Most characters of each listed action's signature, and of its description, in those
    /// refusals; a longer one is cut and marked `…(+N chars)`.
    pub max_action_signature: usize,
    /// Most values of a property's `enum` the `schemas` excerpt of a value or required-key
    /// refusal lists (`missing_required_fields`, `missing_required_group`, `invalid_values`);
    /// the others are counted in `enum_omitted`. The `input_schema` digest still carries them
    /// all.
    pub max_listed_enum_values: usize,
    /// Most tools one `tools/list` answer carries (`None`, the default: every tool in one
    /// answer, `cursor` ignored, as the founding contract's LIST-11 has it). With `Some(n)` a
    /// longer list is paged: `nextCursor` gives the next page's opaque cursor, and a `cursor`
    /// that was not one (`Invalid cursor: ...`) or whose place the list no longer has
    /// (`Stale cursor: ...`, after a session's runtime tools changed) is refused `-32602`.
    pub tools_per_page: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_batch: DEFAULT_MAX_BATCH,
            max_initialize_params: DEFAULT_MAX_INITIALIZE_PARAMS,
            max_initialize_params_total: DEFAULT_MAX_INITIALIZE_PARAMS_TOTAL,
            max_calls_per_session: DEFAULT_MAX_CALLS_PER_SESSION,
            max_subscriptions_per_session: DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            max_sessions_per_client: DEFAULT_MAX_SESSIONS_PER_CLIENT,
            call_timeout: Some(DEFAULT_CALL_TIMEOUT),
            tool_call_timeouts: HashMap::new(),
            max_error_text: DEFAULT_MAX_ERROR_TEXT,
            max_hints: DEFAULT_MAX_HINTS,
            max_logged_events: DEFAULT_MAX_LOGGED_EVENTS,
            max_queued_notes: DEFAULT_MAX_QUEUED_NOTES,
            max_logged_bytes: DEFAULT_MAX_LOGGED_BYTES,
            max_logged_bytes_total: DEFAULT_MAX_LOGGED_BYTES_TOTAL,
            max_listen_uris: DEFAULT_MAX_LISTEN_URIS,
            max_listen_task_ids: DEFAULT_MAX_LISTEN_TASK_IDS,
            max_template_uri: DEFAULT_MAX_TEMPLATE_URI,
            max_template_match_steps: DEFAULT_MAX_TEMPLATE_MATCH_STEPS,
            max_listed_actions: DEFAULT_MAX_LISTED_ACTIONS,
            max_action_signature: DEFAULT_MAX_ACTION_SIGNATURE,
            max_listed_enum_values: DEFAULT_MAX_LISTED_ENUM_VALUES,
            tools_per_page: None,
        }
    }
}

impl Limits {
    /// Most messages in one batch (default 100).
    pub fn max_batch(mut self, max: usize) -> Self {
        self.max_batch = max;
        self
    }

    /// Largest `initialize` params in bytes (default 64 KiB).
    pub fn max_initialize_params(mut self, bytes: usize) -> Self {
        self.max_initialize_params = bytes;
        self
    }

    /// Most calls running at once in one session (default 64).
    pub fn max_calls_per_session(mut self, max: usize) -> Self {
        self.max_calls_per_session = max;
        self
    }

    /// Most resource subscriptions of one session (default 1,000).
    pub fn max_subscriptions_per_session(mut self, max: usize) -> Self {
        self.max_subscriptions_per_session = max;
        self
    }

    /// Most resource subscriptions of all sessions (default 100,000).
    pub fn max_subscriptions(mut self, max: usize) -> Self {
        self.max_subscriptions = max;
        self
    }

    /// Most notes queued for one call's stream while its client has not read them (default
    /// 256; the oldest notification is dropped for the newest).
    pub fn max_queued_notes(mut self, max: usize) -> Self {
        self.max_queued_notes = max;
        self
    }

    /// Most resource URIs one listen stream may list (default 1,000).
    pub fn max_listen_uris(mut self, max: usize) -> Self {
        self.max_listen_uris = max;
        self
    }

    /// Most task ids one listen stream may list (default 100).
    pub fn max_listen_task_ids(mut self, max: usize) -> Self {
        self.max_listen_task_ids = max;
        self
    }

    /// Longest URI matched against a resource template, in bytes (default 8 KiB).
    pub fn max_template_uri(mut self, bytes: usize) -> Self {
        self.max_template_uri = bytes;
        self
    }

    /// Most steps of one reading when a URI is matched against a template (default 100,000).
    pub fn max_template_match_steps(mut self, steps: usize) -> Self {
        self.max_template_match_steps = steps;
        self
    }

    /// Most actions a missing or unknown action refusal lists with signatures (default 20).
    pub fn max_listed_actions(mut self, max: usize) -> Self {
        self.max_listed_actions = max;
        self
    }

    /// Most characters of each listed action's signature and description in a missing or
    /// unknown action refusal (default 200).
    pub fn max_action_signature(mut self, chars: usize) -> Self {
        self.max_action_signature = chars;
        self
    }

    /// Most values of a property's `enum` a value or required-key refusal lists in its
    /// `schemas` excerpt (default 10).
    pub fn max_listed_enum_values(mut self, max: usize) -> Self {
        self.max_listed_enum_values = max;
        self
    }

    /// Pages `tools/list` at `max` tools per answer (0 reads as 1); by default it is not
    /// paged (one answer, `cursor` ignored). A client following `nextCursor` (wymcp's
    /// `client::Client` does) reads every tool once, in the unpaged list's order.
    ///
    /// ```
    /// use wymcp::{Limits, Server};
    ///
    /// let server = Server::builder().limits(Limits::default().tools_per_page(50)).build()?;
    /// assert_eq!(server.limits().tools_per_page, Some(50));
    /// # Ok::<(), wymcp::ConfigurationError>(())
    /// ```
    pub fn tools_per_page(mut self, max: usize) -> Self {
        self.tools_per_page = Some(max);
        self
    }

    /// Most live sessions per principal or client address (default 1,000).
    pub fn max_sessions_per_client(mut self, max: usize) -> Self {
        self.max_sessions_per_client = max;
        self
    }

    /// Longest a call may run (default 5 minutes).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = Some(timeout);
        self
    }

    /// No call timeout (a call runs until it ends or is cancelled).
    pub fn no_call_timeout(mut self) -> Self {
        self.call_timeout = None;
        self
    }

    /// The call timeout of one tool, overriding [`call_timeout`](Self::call_timeout).
    pub fn tool_call_timeout(mut self, tool: impl Into<String>, timeout: Duration) -> Self {
        self.tool_call_timeouts.insert(tool.into(), timeout);
        self
    }

    /// Most characters of an application's error text (default 2,000).
    pub fn max_error_text(mut self, chars: usize) -> Self {
        self.max_error_text = chars;
        self
    }

    /// Most hints one answer carries (default 10).
    pub fn max_hints(mut self, max: usize) -> Self {
        self.max_hints = max;
        self
    }

    /// Most events kept for replay per session (default 1,000).
    pub fn max_logged_events(mut self, max: usize) -> Self {
        self.max_logged_events = max;
        self
    }

    /// Most bytes of events kept for replay per session (default 1 MiB).
    pub fn max_logged_bytes(mut self, bytes: usize) -> Self {
        self.max_logged_bytes = bytes;
        self
    }

    /// Most bytes of events the in-memory event log keeps for all sessions together
    /// (default 256 MiB).
    pub fn max_logged_bytes_total(mut self, bytes: usize) -> Self {
        self.max_logged_bytes_total = bytes;
        self
    }

    /// Most weight of what `initialize` keeps for all live sessions together (default
    /// 256 MiB; a session's client capabilities and info weigh their compact JSON bytes plus
    /// 64 bytes per JSON value).
    ///
    /// ```
    /// let limits = wymcp::Limits::default().max_initialize_params_total(64 * 1024 * 1024);
    /// assert_eq!(limits.max_initialize_params_total, 64 * 1024 * 1024);
    /// ```
    pub fn max_initialize_params_total(mut self, weight: usize) -> Self {
        self.max_initialize_params_total = weight;
        self
    }

    /// The call timeout of `tool`: its own, else the server's.
    pub fn timeout_for(&self, tool: &str) -> Option<Duration> {
        self.tool_call_timeouts
            .get(tool)
            .copied()
            .or(self.call_timeout)
    }

    /// `text` cut to [`max_error_text`](Self::max_error_text) characters, marked
    /// `…(+N chars)` when cut.
    pub(crate) fn error_text(&self, text: String) -> String {
        if text.len() <= self.max_error_text {
            return text;
        }
        wymcp_core::bound::echo_within(&text, self.max_error_text)
    }
}
