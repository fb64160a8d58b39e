//! Completion of an upstream's prompt arguments and resource-template variables: each
//! `completion/complete` for one of them forwarded to the upstream that serves it.

use std::sync::Arc;

use serde_json::{Value, json};
use wymcp::Context;
use wymcp::completion::{Complete, Completion, CompletionRequest};

use crate::upstream::Upstream;

/// What a completion completes, as the gateway registers it.
#[derive(Debug)]
pub(crate) enum Completed {
    /// The argument of the prompt served under this name.
    Prompt(String),
    /// The variable of this resource template (kept as the upstream lists it).
    Template(String),
}

/// One argument (or variable) whose completions the upstream answers.
#[derive(Debug)]
pub(crate) struct ForwardCompletion {
    pub(crate) completed: Completed,
    pub(crate) argument: String,
    /// The `ref` sent upstream: the upstream's own prompt name, or the template.
    reference: Value,
    upstream: Arc<Upstream>,
}

impl ForwardCompletion {
    /// Argument `argument` of the prompt served as `served`, which the upstream calls
    /// `upstream_name`.
    pub(crate) fn prompt(
        upstream: &Arc<Upstream>,
        served: &str,
        upstream_name: &str,
        argument: &str,
    ) -> ForwardCompletion {
        ForwardCompletion {
            completed: Completed::Prompt(served.to_owned()),
            argument: argument.to_owned(),
            reference: json!({"type": "ref/prompt", "name": upstream_name}),
            upstream: Arc::clone(upstream),
        }
    }

    /// Variable `variable` of the resource template `template`.
    pub(crate) fn template(
        upstream: &Arc<Upstream>,
        template: &str,
        variable: &str,
    ) -> ForwardCompletion {
        ForwardCompletion {
            completed: Completed::Template(template.to_owned()),
            argument: variable.to_owned(),
            reference: json!({"type": "ref/resource", "uri": template}),
            upstream: Arc::clone(upstream),
        }
    }
}

/// The provider registered on the server: the upstream's answer, its values, `total` and
/// `hasMore` kept; no values when the upstream fails (logged, naming it).
#[derive(Debug)]
pub(crate) struct Forward {
    reference: Value,
    upstream: Arc<Upstream>,
}

impl From<&ForwardCompletion> for Forward {
    fn from(completion: &ForwardCompletion) -> Self {
        Forward {
            reference: completion.reference.clone(),
            upstream: Arc::clone(&completion.upstream),
        }
    }
}

impl Complete for Forward {
    async fn complete(&self, request: CompletionRequest, ctx: Context) -> Completion {
        let answer = self
            .upstream
            .complete(
                self.reference.clone(),
                &request.argument,
                &request.value,
                &ctx,
            )
            .await;
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) => {
                tracing::warn!(target: "wymcp_gateway", upstream = self.upstream.name(), %error,
                    "completion/complete failed upstream");
                return Completion::empty();
            }
        };
        let values = answer
            .get("values")
            .and_then(Value::as_array)
            .map(|values| values.iter().filter_map(Value::as_str).map(str::to_owned))
            .into_iter()
            .flatten();
        let mut completion = Completion::new(values);
        if let Some(total) = answer.get("total").and_then(Value::as_u64) {
            completion = completion.total(total);
        }
        if let Some(more) = answer.get("hasMore").and_then(Value::as_bool) {
            completion = completion.has_more(more);
        }
        completion
    }
}
