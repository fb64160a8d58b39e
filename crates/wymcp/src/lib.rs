//! # wymcp
//!
//! Build MCP (Model Context Protocol) servers whose tools a model uses correctly, cheaply and
//! safely.
//!
//! | Feature | What you get |
//! |---|---|
//! | [`ActionTool`] | one tool name exposing many actions: fifty operations cost the model five tool definitions |
//! | Dispatch gates | every call checked (unknown arguments, types, action, required, required_one_of, unknown keys at any depth, JSON Schema values); each refusal tells the model exactly what to fix and points at `help` |
//! | `help` | injected into every server: an index, a tool, or one action in full |
//! | Validated before served | a malformed schema fails [`ServerBuilder::build`], never a request |
//! | [`PlainTool`] | a tool with its own input schema, first-class, with the same gates |
//! | [`Context`] | while a tool runs: progress, log messages, sampling, elicitation and roots requests ([`session::Sampling`], [`session::Elicitation`], [`session::ListRoots`]) in both eras ([`mrtr`]: multi round-trip requests in the stateless one), runtime tools on the live session ([`session::SessionHandle`]) |
//! | [`transport`] | Streamable HTTP ([`transport::http`]) and stdio ([`transport::stdio::serve`]) |
//! | [`resource`], [`prompt`], [`completion`] | static and templated resources (RFC 6570) with subscriptions, prompts with checked arguments, completion providers; all validated at `build()` |
//! | [`testing`] | an in-process client over a built server, typed results and gate errors, assertion helpers |
//! | [`TypedActionTool`] | the actions as a Rust enum of serde structs (`#[derive(ActionEnum)]`): schemas generated, `run` receives the variant; see [`tool_kinds`] for when to use which |
//! | [`tool`](macro@tool), [`plain_tool`], [`prompt`](macro@prompt) | the shortest forms: an `impl` block's `async fn`s as actions, one `async fn` as a plain tool, an `async fn` as a prompt; schemas from the parameters, validated while your crate compiles |
//!
//! [`prompt`]: mod@prompt
//!
//! ```
//! use serde_json::json;
//! use wymcp::{ActionSchema, ActionResult, ActionTool, Actions, Context, Data, Reply, Server};
//!
//! struct Greeter;
//!
//! impl ActionTool for Greeter {
//!     fn name(&self) -> &str { "greeter" }
//!     fn description(&self) -> &str { "Greets people" }
//!     fn actions(&self) -> Actions {
//!         Actions::new().action(
//!             "greet",
//!             ActionSchema::new("Greet someone by name")
//!                 .property("name", json!({"type": "string", "minLength": 1}))
//!                 .required(["name"]),
//!         )
//!     }
//!     async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
//!         Ok(Reply::new(json!({"greeting": format!("Hello, {}!", data["name"].as_str().unwrap_or("you"))})))
//!     }
//! }
//!
//! let server = Server::builder().name("greeter").tool(Greeter).build().unwrap();
//! assert_eq!(server.tool_names(), ["greeter", "help"]);
//! ```
//!
//! ## Cargo features
//!
//! | Feature | Default | Adds |
//! |---|---|---|
//! | `http` | on | [`transport::http`] (Streamable HTTP on axum and hyper), `--port`/`--bind` in [`run`](fn@run) |
//! | `stdio` | on | [`transport::stdio`], `--stdio` in [`run`](fn@run) |
//! | `client` | off | `wymcp::client`: an MCP client over Streamable HTTP (reqwest with rustls): both eras, tools, a timeout and limits on every answer |
//! | `jwt` | off | `transport::http::jwt::JwtAuth`: JWT access tokens verified against static keys or a JWKS URL (jsonwebtoken, reqwest with rustls) |
//! | `rate-limit` | off | `middleware::RateLimitLayer` and `RateLimitStore`: a token bucket per caller (governor) |
//! | `skills` | off | `skill` and `ServerBuilder::skill`/`skills`: the skills extension, `SKILL.md` files served as `skill://` resources (serde_norway for their YAML frontmatter) |
//! | `idn` | off | the value gate's `idn-email` and `idn-hostname` formats (jsonschema's `idna`) |
//!
//! Features only add. A stdio-only server builds no HTTP stack:
//! `wymcp = { version = "0.1", default-features = false, features = ["stdio"] }`. With neither,
//! the core remains (tools, gates, `help`, resources, prompts, [`testing`]) for a transport of
//! your own; [`run`](fn@run) needs one of the two.

#![warn(missing_docs)]
// The transport-neutral code (sessions, the stateless era, JSON-RPC framing) serves both
// transports; a build with one of them left out leaves parts of it unused. The default build
// (both) keeps every dead-code lint.
#![cfg_attr(
    not(all(feature = "http", feature = "stdio")),
    allow(dead_code, unused_imports)
)]

pub mod backend;
pub mod card;
#[cfg(feature = "client")]
pub mod client;
pub mod completion;
mod context;
mod dispatch;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod limits;
pub mod live;
pub mod middleware;
pub mod mrtr;
mod paging;
pub mod prompt;
pub mod protocol;
mod random;
pub mod resource;
#[cfg(any(feature = "http", feature = "stdio"))]
pub mod run;
mod serve;
mod server;
pub mod session;
#[cfg(feature = "skills")]
pub mod skill;
pub mod task;
pub mod testing;
pub mod tool;
pub mod transport;
pub mod user_state;

#[doc = include_str!("docs/tool_kinds.md")]
pub mod tool_kinds {}

pub use context::{Context, Identity};
pub use limits::values::Limits;
pub use prompt::definition::Prompt;
pub use protocol::content::Content;
pub use protocol::error::RpcError;
pub use protocol::version::ProtocolVersion;
pub use resource::definition::{Resource, ResourceTemplate};
#[cfg(any(feature = "http", feature = "stdio"))]
pub use run::entry::{run, run_blocking};
pub use server::{Server, ServerBuilder, ServerInfo, ToolPolicy};
pub use tool::action::ActionTool;
pub use tool::plain::{CallError, CallOutput, CallResult, PlainTool};
pub use tool::reply::{ActionError, ActionResult, Data, Reply};
pub use tool::typed::{ActionEnum, TypedActionTool};
pub use tool::visibility::Visibility;
pub use wymcp_core::{ActionSchema, Actions, ConfigurationError, Hint};

/// Declares a tool's actions as a JSON literal, validated while your crate compiles.
///
/// The literal is checked by the very chain [`ServerBuilder::build`] runs; a refusal fails the
/// build with the runtime's message, pointing at the offending token. It expands to
/// [`Actions`].
///
/// ```
/// let actions = wymcp::actions!({
///     "get": {
///         "description": "Get a task by id or by title",
///         "properties": {"id": {"type": "integer"}, "title": {"type": "string"}},
///         "required_one_of": [["id"], ["title"]]
///     }
/// });
/// assert_eq!(actions.len(), 1);
/// ```
///
/// ```compile_fail
/// let actions = wymcp::actions!({
///     "get": {"description": "Get a task", "properties": {}, "required": ["id"]}
/// });
/// ```
pub use wymcp_macros::actions;

/// Derives [`ActionEnum`]: see the trait for what a variant, its doc and its struct become.
pub use wymcp_macros::ActionEnum;

/// Makes an inherent `impl` block an action-dispatched tool: the type implements
/// [`ActionTool`], each `async fn` of the block is an action.
///
/// * **The tool**: named after the type in snake_case (`Notes` → `notes`), described by the
///   block's doc comment; `#[wymcp::tool(name = "...", description = "...")]` overrides either.
/// * **An action**: each `async fn(&self, ...)`, named after the method, described by the first
///   paragraph of its doc comment (one line); later paragraphs are its `notes`.
///   `#[wymcp(required_one_of = [[...]], related = [...], notes = "...", example = {...},
///   rename = "...")]` on the method adds the rest of the vocabulary; `#[wymcp(skip)]` keeps an
///   `async fn` a plain method.
/// * **Its data**: the parameters, each a property named after it, described by its `///` doc
///   comment. Required unless it is an `Option` or has `#[wymcp(default = <JSON>)]`; JSON
///   Schema keywords (`minimum`, `maxLength`, `pattern`, `format`, `enum`, ...) and
///   `schema = {...}` go in the same attribute. A parameter of type [`Context`] (or
///   `&Context`) receives the call's context instead. Or one struct: `Params(x): Params<T>`.
/// * **Its answer**: a `T: Serialize` itself (`-> Note`: always a success), or anything
///   [`IntoActionResult`](tool::IntoActionResult): a `Result<T: Serialize, E>` whose error converts into a
///   [`Failure`](tool::Failure), a [`Reply`], an [`ActionResult`], a `serde_json::Value`. The return type is
///   read by its name: one whose last segment is `Result`, `ActionResult`, `Reply` or `Value`
///   is converted, any other is the value answered.
/// * **The rest of [`ActionTool`]**: a non-async method of the block named `hints`,
///   `handle_error`, `output_schema`, `title`, `annotations` or `action_context`, with
///   `ActionTool`'s signature, provides it. `hints` and `action_context` may take the action
///   as an enum instead of its name: write `action: NotesAction` (the type's name and
///   `Action`), and the attribute generates `enum NotesAction { Add, List, ... }` (with
///   `name()` and `from_name()`), so the match is exhaustive.
/// * **What comes with the tool**: an `async fn` marked `#[wymcp(plain)]` is a plain tool
///   served beside this one (as [`plain_tool`] makes it: named after the method, its
///   parameters the input schema, its return type the output schema), and one marked
///   `#[wymcp(prompt)]` (or `#[wymcp(prompt, title = "...")]`) a prompt (as [`prompts`]
///   makes it). `.tool(value)` registers them after the tool ([`ActionTool::companions`]);
///   each runs on a clone of the value, so the type is `Clone` (an `Arc` inside).
///
/// A parameter written with the standard types (`String`, `bool`, integers, floats, `Option`,
/// `Vec`, sets, `String`-keyed maps, `serde_json::Value`) has its schema derived while your
/// crate compiles, and the whole action goes through the chain `build()` runs: a refusal fails
/// the build at the offending token. Any other type brings its schema through `JsonSchema`
/// ([`data`]), validated by `build()`. The gates, refusals and `help` are the ones a literal
/// [`actions!`] tool gets.
///
/// ```
/// use wymcp::tool::Failure;
/// use wymcp::Server;
///
/// struct Notes;
///
/// /// Keep short notes
/// #[wymcp::tool]
/// impl Notes {
///     /// Add a note
///     async fn add(
///         &self,
///         /// What to remember
///         #[wymcp(minLength = 1)]
///         text: String,
///         /// Labels to find it by
///         #[wymcp(default = [])]
///         tags: Vec<String>,
///     ) -> Result<serde_json::Value, Failure> {
///         Ok(serde_json::json!({"added": text, "tags": tags}))
///     }
/// }
///
/// let server = Server::builder().tool(Notes).build().unwrap();
/// assert_eq!(server.tool_names(), ["notes", "help"]);
/// ```
///
/// ```compile_fail
/// struct Notes;
///
/// /// Keep short notes
/// #[wymcp::tool]
/// impl Notes {
///     /// List the notes
///     async fn list(&self, #[wymcp(default = "twenty")] limit: u32) -> serde_json::Value {
///         serde_json::json!(limit)
///     }
/// }
/// ```
pub use wymcp_macros::tool;

/// Makes an inherent `impl` block holding one `async fn` a plain tool: the type implements
/// [`PlainTool`], the method is the tool.
///
/// The tool is named after the method, described by its doc comment (newlines allowed);
/// `#[wymcp::plain_tool(name = "...", description = "...")]` overrides either. Its input
/// schema is the method's parameters, as for a [`tool`](macro@tool) action (doc comments, keywords,
/// `Option` for optional; no defaults: a plain tool's arguments have none), validated while
/// your crate compiles when their types are standard ones. A method returning `T` or
/// `Result<T, E>` with a struct `T` (deriving `Serialize` and `JsonSchema`, or [`data`]) gets
/// `T`'s schema as its `outputSchema`, and its answers are served as `structuredContent`
/// validated against it, with the JSON as text content. A non-async `title`, `annotations`
/// or `output_schema` method of the block provides that part of [`PlainTool`].
///
/// ```
/// use wymcp::tool::Failure;
/// use wymcp::{ProtocolVersion, Server};
///
/// #[wymcp::data]
/// struct Count {
///     /// How many notes
///     count: u32,
/// }
///
/// struct Stats;
///
/// #[wymcp::plain_tool]
/// impl Stats {
///     /// Count the notes carrying a tag
///     async fn count_notes(&self, /** The tag */ tag: String) -> Result<Count, Failure> {
///         Ok(Count { count: tag.len() as u32 })
///     }
/// }
///
/// let server = Server::builder().plain_tool(Stats).build().unwrap();
/// let list = server.list_tools(ProtocolVersion::V2025_11_25);
/// assert_eq!(list["tools"][0]["outputSchema"]["properties"]["count"]["type"], "integer");
/// ```
pub use wymcp_macros::plain_tool;

/// Makes an `async fn` a prompt: the function becomes a unit struct of the same name
/// implementing [`Prompt`], registered as `.prompt(name)`.
///
/// The prompt is named after the function and described by its doc comment. Each parameter is
/// an argument of the same name, described by its doc comment, required unless it is an
/// `Option`; the client sends strings, parsed into the parameter's type with `FromStr`
/// (`String` as sent; a value that does not parse is refused with `-32602`). A [`Context`]
/// parameter receives the call's context. The function returns a `String` (one user message),
/// a `Vec<PromptMessage>`, a [`GetPromptResult`](prompt::GetPromptResult), or a `Result` of one of those and a
/// [`PromptError`](prompt::PromptError) ([`prompt::IntoPromptResult`]).
///
/// ```
/// use wymcp::Server;
///
/// /// Summarize the notes carrying a tag
/// #[wymcp::prompt]
/// async fn summarize(/** The tag */ tag: String, /** At most this many words */ words: Option<u32>) -> String {
///     format!("Summarize my notes tagged {tag} in {} words.", words.unwrap_or(50))
/// }
///
/// let server = Server::builder().prompt(summarize).build().unwrap();
/// assert_eq!(server.prompt_names(), ["summarize"]);
/// ```
pub use wymcp_macros::prompt;

/// Makes each `async fn(&self, ...)` of an `impl` block a prompt that reads the value's state:
/// named after the method, described by its doc comment, its other parameters the arguments
/// (as for a [`prompt`](macro@prompt) function); `#[wymcp(title = "...")]` on the method gives it a title.
/// For each method the block gains `<method>_prompt(&self)`, the [`Prompt`] to register,
/// which renders through a clone of `self` (so the type is `Clone`, an `Arc` inside).
///
/// ```
/// use wymcp::testing::TestClient;
/// use wymcp::Server;
///
/// #[derive(Clone)]
/// struct Notes(std::sync::Arc<Vec<String>>);
///
/// #[wymcp::prompts]
/// impl Notes {
///     /// Ask for a summary of the notes
///     #[wymcp(title = "Summarize my notes")]
///     async fn summarize(&self, /** At most this many words */ words: Option<u32>) -> String {
///         let words = words.unwrap_or(50);
///         format!("Summarize in {words} words: {}", self.0.join("; "))
///     }
/// }
///
/// let notes = Notes(std::sync::Arc::new(vec!["Buy milk".into()]));
/// let server = Server::builder().prompt(notes.summarize_prompt()).build().unwrap();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let got = TestClient::new(server)
///     .request("prompts/get", Some(serde_json::json!({"name": "summarize", "arguments": {"words": "5"}})))
///     .await
///     .unwrap();
/// assert_eq!(got["messages"][0]["content"]["text"], "Summarize in 5 words: Buy milk");
/// # });
/// ```
pub use wymcp_macros::prompts;

/// Makes the marked `async fn`s of an `impl` block resources: `#[wymcp(template =
/// "notes://notes/{id}")]` a resource template whose variables are the method's parameters
/// (parsed with `FromStr`; one that does not parse is an invalid request naming it),
/// `#[wymcp(uri = "notes://all")]` a single resource read on demand; `mime_type = "..."` beside
/// either. The method's doc comment is the description, its name the resource's name. For each
/// method the block gains `<method>_resource(&self)`, the [`ResourceTemplate`] (or
/// [`Resource`]) to register, which reads through a clone of `self` (so the type is `Clone`,
/// an `Arc` inside). A method returns a `String` (the text at the URI read), the contents, or
/// a `Result` of one of those and a [`ResourceError`](resource::ResourceError) ([`resource::IntoContents`]).
///
/// The template's variables and the parameters must match: a variable no parameter takes, or
/// a parameter the template lacks, fails the build at the token.
///
/// ```
/// use wymcp::testing::TestClient;
/// use wymcp::resource::ResourceError;
/// use wymcp::Server;
///
/// #[derive(Clone)]
/// struct Notes(std::sync::Arc<Vec<String>>);
///
/// #[wymcp::resources]
/// impl Notes {
///     /// A note, by its number
///     #[wymcp(template = "notes://notes/{n}", mime_type = "text/plain")]
///     async fn note(&self, n: usize) -> Result<String, ResourceError> {
///         self.0.get(n).cloned().ok_or(ResourceError::NotFound)
///     }
/// }
///
/// let notes = Notes(std::sync::Arc::new(vec!["Buy milk".into()]));
/// let server = Server::builder().resource_template(notes.note_resource()).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let client = TestClient::new(server);
/// let read = client.read_resource("notes://notes/0").await.unwrap();
/// assert_eq!(read["contents"][0]["text"], "Buy milk");
/// let refused = client.read_resource("notes://notes/x").await.unwrap_err();
/// assert!(refused.message().contains("\"n\""), "{}", refused.message());
/// # });
/// ```
///
/// ```compile_fail
/// #[derive(Clone)]
/// struct Notes;
///
/// #[wymcp::resources]
/// impl Notes {
///     /// A note
///     #[wymcp(template = "notes://notes/{id}")]
///     async fn note(&self, number: u32) -> String { number.to_string() }
/// }
/// ```
pub use wymcp_macros::resources;

/// Derives `Deserialize`, `Serialize` and [`JsonSchema`] for a type an action takes or
/// returns, through wymcp's own serde and schemars: your crate needs no `schemars` dependency.
/// `#[serde(...)]` and `#[schemars(...)]` attributes work as under the derives.
///
/// ```
/// use wymcp::tool::{Failure, Params};
/// use wymcp::Server;
///
/// #[wymcp::data]
/// struct AddNote {
///     /// What to remember
///     text: String,
///     /// Labels to find it by
///     #[serde(default)]
///     tags: Vec<String>,
/// }
///
/// struct Notes;
///
/// /// Keep short notes
/// #[wymcp::tool]
/// impl Notes {
///     /// Add a note
///     async fn add(&self, Params(note): Params<AddNote>) -> Result<AddNote, Failure> {
///         Ok(note)
///     }
/// }
///
/// let server = Server::builder().tool(Notes).build().unwrap();
/// assert_eq!(server.tool_names(), ["notes", "help"]);
/// ```
pub use wymcp_macros::data;

/// Derives a JSON Schema for an action's struct (schemars' derive). Its generated code names
/// `schemars`: depend on `schemars = "1"`, or derive through [`data`], which needs no
/// `schemars` dependency.
pub use schemars::JsonSchema;

#[doc(hidden)]
pub mod __private;

/// The crate's README (as crates.io shows it), its code compiled as a doctest so it stays true.
/// The repository's README and guide are compiled by the `wymcp-guide` package (`docs/`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
