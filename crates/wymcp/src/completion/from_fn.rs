//! A completion provider from a closure: no struct and `Complete` impl for each.

use std::future::{Future, ready};

use crate::completion::{Complete, Completion, CompletionRequest};
use crate::context::Context;

/// Completes with a closure from the request to the values. Made by [`complete_fn`].
#[derive(Debug, Clone, Copy)]
pub struct CompleteFn<F>(F);

/// A [`Complete`] provider from a closure, for
/// [`ServerBuilder::prompt_completion`](crate::ServerBuilder::prompt_completion) and
/// [`ServerBuilder::template_completion`](crate::ServerBuilder::template_completion).
///
/// ```
/// use serde_json::json;
/// use wymcp::completion::{complete_fn, Completion};
/// use wymcp::{Context, Server};
///
/// /// Summarize the notes carrying a tag
/// #[wymcp::prompt]
/// async fn summarize(tag: String) -> String {
///     format!("Summarize my notes tagged {tag}")
/// }
///
/// let tags = complete_fn(|request| {
///     let known = ["errands", "home", "work"];
///     Completion::new(known.into_iter().filter(|t| t.starts_with(request.value.as_str())))
/// });
/// let server = Server::builder()
///     .prompt(summarize)
///     .prompt_completion("summarize", "tag", tags)
///     .build()
///     .unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let completed = server
///     .handle_completion_complete(
///         Some(json!({"ref": {"type": "ref/prompt", "name": "summarize"},
///                     "argument": {"name": "tag", "value": "h"}})),
///         Context::default(),
///     )
///     .await
///     .unwrap();
/// assert_eq!(completed["completion"]["values"], json!(["home"]));
/// # });
/// ```
pub fn complete_fn<F>(complete: F) -> CompleteFn<F>
where
    F: Fn(CompletionRequest) -> Completion + Send + Sync + 'static,
{
    CompleteFn(complete)
}

impl<F> Complete for CompleteFn<F>
where
    F: Fn(CompletionRequest) -> Completion + Send + Sync + 'static,
{
    fn complete(
        &self,
        request: CompletionRequest,
        _ctx: Context,
    ) -> impl Future<Output = Completion> + Send {
        ready((self.0)(request))
    }
}
