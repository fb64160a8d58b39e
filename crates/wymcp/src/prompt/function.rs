//! Prompts written as one `async fn` (`#[wymcp::prompt]`): what the attribute's generated
//! code needs at run time.

use std::str::FromStr;

use crate::prompt::{GetPromptResult, PromptArguments, PromptError, PromptMessage};
use crate::protocol::content::Content;

/// What a `#[wymcp::prompt]` function may return: a text (one user message), the messages,
/// a [`GetPromptResult`], or a `Result` of one of those and a [`PromptError`].
///
/// ```
/// use wymcp::prompt::IntoPromptResult;
///
/// let got = "Summarize my notes".to_owned().into_prompt_result().unwrap();
/// assert_eq!(got.to_value(wymcp::ProtocolVersion::V2025_11_25)["messages"][0]["role"], "user");
/// ```
#[diagnostic::on_unimplemented(
    message = "a prompt function cannot return `{Self}`",
    label = "return a `String` (one user message), a `Vec<PromptMessage>`, a `GetPromptResult`, or a `Result` of one of those and a `PromptError`"
)]
pub trait IntoPromptResult {
    /// The prompt's messages.
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(
            Content::text(self),
        )]))
    }
}

impl<T: IntoPromptResult> IntoPromptResult for Result<T, PromptError> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        self.and_then(IntoPromptResult::into_prompt_result)
    }
}

/// What the attribute's generated code calls; not public API.
pub(crate) mod support {
    use super::*;

    /// The argument `name` parsed into `T` (a `String` as sent); absent is `None` (the
    /// declaration already refused a missing required one).
    pub fn prompt_arg<T: FromStr>(
        arguments: &PromptArguments,
        name: &str,
    ) -> Result<Option<T>, PromptError>
    where
        T::Err: std::fmt::Display,
    {
        arguments
            .get(name)
            .map(|text| {
                text.parse::<T>().map_err(|error| {
                    PromptError::InvalidArguments(format!(
                        "argument {:?}: {error}",
                        wymcp_core::bound::echo(name)
                    ))
                })
            })
            .transpose()
    }

    /// A required argument: present, since the declaration checked it.
    pub fn prompt_required<T>(value: Option<T>, name: &str) -> Result<T, PromptError> {
        value.ok_or_else(|| {
            PromptError::InvalidArguments(format!("missing required argument {name:?}"))
        })
    }

    /// The prompt's answer.
    pub fn prompt_answer<R: IntoPromptResult>(result: R) -> Result<GetPromptResult, PromptError> {
        result.into_prompt_result()
    }
}
