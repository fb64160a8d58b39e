//! Completion: `completion/complete` for prompt arguments and resource-template variables, one
//! [`Complete`] provider per argument or variable, checked at `build()` against what it names.
//!
//! ```
//! use serde_json::json;
//! use wymcp::completion::CompletionValues;
//! use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError};
//! use wymcp::Prompt;
//! use wymcp::testing::TestClient;
//! use wymcp::{Context, Server};
//!
//! struct Translate;
//! impl Prompt for Translate {
//!     fn name(&self) -> &str { "translate" }
//!     fn arguments(&self) -> Vec<PromptArgument> { vec![PromptArgument::required("language")] }
//!     async fn get(&self, _args: PromptArguments, _ctx: Context) -> Result<GetPromptResult, PromptError> {
//!         Ok(GetPromptResult::default())
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let server = Server::builder()
//!     .prompt(Translate)
//!     .prompt_completion("translate", "language", CompletionValues::new(["french", "finnish", "german"]))
//!     .build()
//!     .unwrap();
//! let result = TestClient::new(server)
//!     .request(
//!         "completion/complete",
//!         Some(json!({"ref": {"type": "ref/prompt", "name": "translate"}, "argument": {"name": "language", "value": "f"}})),
//!     )
//!     .await
//!     .unwrap();
//! assert_eq!(result["completion"]["values"], json!(["french", "finnish"]));
//!
//! // A provider naming an argument the prompt does not declare is refused at build().
//! assert!(Server::builder()
//!     .prompt(Translate)
//!     .prompt_completion("translate", "lang", CompletionValues::new(["x"]))
//!     .build()
//!     .is_err());
//! # });
//! ```

mod from_fn;
mod provider;
pub(crate) mod registry;

pub(crate) use provider::DynComplete;

pub use from_fn::{CompleteFn, complete_fn};
pub use provider::{
    Complete, Completion, CompletionRef, CompletionRequest, CompletionValues, MAX_VALUES,
};
