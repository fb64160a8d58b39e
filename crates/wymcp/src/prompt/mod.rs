//! Prompts: declared arguments, `prompts/list` (paginated), `prompts/get` with the arguments
//! checked against the declaration, messages of text, image, audio and embedded resources.
//!
//! ```
//! use serde_json::json;
//! use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError, PromptMessage};
//! use wymcp::Prompt;
//! use wymcp::testing::TestClient;
//! use wymcp::{Content, Context, Server};
//!
//! struct Greet;
//! impl Prompt for Greet {
//!     fn name(&self) -> &str { "greet" }
//!     fn arguments(&self) -> Vec<PromptArgument> { vec![PromptArgument::required("who")] }
//!     async fn get(&self, args: PromptArguments, _ctx: Context) -> Result<GetPromptResult, PromptError> {
//!         Ok(GetPromptResult::new(vec![PromptMessage::user(Content::text(format!("Greet {}", args["who"])))]))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let server = Server::builder().prompt(Greet).build().unwrap();
//! let client = TestClient::new(server);
//! let got = client.get_prompt("greet", json!({"who": "Ada"})).await.unwrap();
//! assert_eq!(got["messages"][0]["content"]["text"], "Greet Ada");
//!
//! let missing = client.get_prompt("greet", json!(null)).await.unwrap_err();
//! assert_eq!(missing.code(), -32602);
//! assert!(missing.message().contains("'who'"));
//! # });
//! ```

pub(crate) mod definition;
pub(crate) mod function;
mod message;
pub(crate) mod registry;

pub(crate) use definition::Prompt;
pub use definition::{PromptArgument, PromptArguments, PromptError, Scoped};
pub use function::IntoPromptResult;
pub use message::{GetPromptResult, PromptMessage, Role};
