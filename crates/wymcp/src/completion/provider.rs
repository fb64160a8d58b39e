//! [`Complete`]: a completion provider for one prompt argument or template variable.

use std::collections::BTreeMap;
use std::future::Future;

use serde_json::{Map, Value, json};

use crate::context::Context;
use futures_util::future::BoxFuture;

/// The most values one completion may carry (the spec's limit).
pub const MAX_VALUES: usize = 100;

/// What a completion is asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum CompletionRef {
    /// A prompt argument: the prompt's name.
    Prompt(String),
    /// A resource-template variable: the URI template, as declared.
    ResourceTemplate(String),
}

/// A `completion/complete` request, checked: the reference exists and declares the argument.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The prompt or template completed.
    pub reference: CompletionRef,
    /// The argument or variable completed.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// The values of the other arguments already resolved (`context.arguments`, 2025-06-18 on).
    pub context: BTreeMap<String, String>,
}

/// Completion values, with the total and whether more exist.
///
/// More than 100 values are cut to 100 on the wire, with `hasMore: true` and the `total` of
/// the uncut list (unless set).
///
/// ```
/// use serde_json::json;
/// use wymcp::completion::Completion;
///
/// let c = Completion::new(["python", "pytorch"]);
/// assert_eq!(c.to_value(), json!({"values": ["python", "pytorch"], "total": 2, "hasMore": false}));
/// let many = Completion::new((0..150).map(|i| i.to_string()));
/// assert_eq!(many.to_value()["values"].as_array().unwrap().len(), 100);
/// assert_eq!(many.to_value()["hasMore"], true);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[must_use]
pub struct Completion {
    values: Vec<String>,
    total: Option<u64>,
    has_more: Option<bool>,
}

impl Completion {
    /// Completion of `values`, most relevant first.
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Completion {
            values: values.into_iter().map(Into::into).collect(),
            total: None,
            has_more: None,
        }
    }

    /// No values.
    pub fn empty() -> Self {
        Completion::default()
    }

    /// The total number of matches, when more exist than are sent.
    pub fn total(mut self, total: u64) -> Self {
        self.total = Some(total);
        self
    }

    /// Whether more matches exist than are sent.
    pub fn has_more(mut self, has_more: bool) -> Self {
        self.has_more = Some(has_more);
        self
    }

    /// The values.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// The `completion` object of a `CompleteResult`.
    pub fn to_value(&self) -> Value {
        let count = self.values.len();
        let cut = count > MAX_VALUES;
        let values: Vec<&String> = self.values.iter().take(MAX_VALUES).collect();
        let total = self.total.unwrap_or(count as u64);
        let has_more = self.has_more.unwrap_or(false) || cut;
        let mut map = Map::new();
        map.insert("values".into(), json!(values));
        map.insert("total".into(), json!(total));
        map.insert("hasMore".into(), json!(has_more));
        Value::Object(map)
    }
}

/// Completes one prompt argument or resource-template variable; register it with
/// [`ServerBuilder::prompt_completion`](crate::ServerBuilder::prompt_completion) or
/// [`ServerBuilder::template_completion`](crate::ServerBuilder::template_completion).
///
/// ```
/// use wymcp::Context;
/// use wymcp::completion::{Complete, Completion, CompletionRequest};
///
/// struct Languages;
/// impl Complete for Languages {
///     async fn complete(&self, request: CompletionRequest, _ctx: Context) -> Completion {
///         Completion::new(["python", "rust"].into_iter().filter(|l| l.starts_with(&request.value)))
///     }
/// }
/// ```
pub trait Complete: Send + Sync + 'static {
    /// The values completing `request.value`, most relevant first.
    fn complete(
        &self,
        request: CompletionRequest,
        ctx: Context,
    ) -> impl Future<Output = Completion> + Send;
}

/// A fixed list of values, offered when they start with what the user typed (ignoring case).
///
/// ```
/// use wymcp::completion::CompletionValues;
///
/// let values = CompletionValues::new(["paris", "Parma", "rome"]);
/// assert_eq!(values.matching("par"), ["paris", "Parma"]);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionValues(Vec<String>);

impl CompletionValues {
    /// The values, in the order offered.
    pub fn new<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CompletionValues(values.into_iter().map(Into::into).collect())
    }

    /// The values starting with `prefix`, ignoring case.
    pub fn matching(&self, prefix: &str) -> Vec<&str> {
        let prefix = prefix.to_lowercase();
        self.0
            .iter()
            .filter(|v| v.to_lowercase().starts_with(&prefix))
            .map(String::as_str)
            .collect()
    }
}

impl Complete for CompletionValues {
    async fn complete(&self, request: CompletionRequest, _ctx: Context) -> Completion {
        Completion::new(self.matching(&request.value))
    }
}

/// The object-safe form of [`Complete`].
pub(crate) trait DynComplete: Send + Sync {
    fn complete(&self, request: CompletionRequest, ctx: Context) -> BoxFuture<'_, Completion>;
}

impl<T: Complete> DynComplete for T {
    fn complete(&self, request: CompletionRequest, ctx: Context) -> BoxFuture<'_, Completion> {
        Box::pin(Complete::complete(self, request, ctx))
    }
}
