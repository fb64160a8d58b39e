//! [`Prompt`]: a prompt template the client can list and get, with declared arguments.

use std::collections::BTreeMap;
use std::future::Future;

use serde_json::{Map, Value, json};

use crate::context::Context;
use crate::prompt::GetPromptResult;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::resource::write_named;
use futures_util::future::BoxFuture;

/// The arguments a prompt is got with, by name: every one declared, every required one present.
pub type PromptArguments = BTreeMap<String, String>;

/// One declared prompt argument.
///
/// ```
/// use wymcp::prompt::PromptArgument;
///
/// let language = PromptArgument::required("language").description("The code's language");
/// assert!(language.is_required());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct PromptArgument {
    name: String,
    title: Option<String>,
    description: Option<String>,
    required: bool,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>) -> Self {
        PromptArgument {
            name: name.into(),
            title: None,
            description: None,
            required: true,
        }
    }

    /// An optional argument.
    pub fn optional(name: impl Into<String>) -> Self {
        PromptArgument {
            required: false,
            ..Self::required(name)
        }
    }

    /// A description.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A display title (served from 2025-06-18 on).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the argument is required.
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// The `PromptArgument` object for a session of `version`.
    pub fn to_value(&self, version: ProtocolVersion) -> Value {
        let mut map = Map::new();
        write_named(
            &mut map,
            version,
            &self.name,
            self.title.as_ref(),
            self.description.as_ref(),
        );
        map.insert("required".into(), Value::Bool(self.required));
        Value::Object(map)
    }
}

/// Why getting a prompt failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The arguments are unacceptable (beyond what the declaration checks): `-32602`.
    #[error("invalid prompt arguments: {0}")]
    InvalidArguments(String),
    /// Rendering failed: `-32603`.
    #[error("getting the prompt failed: {0}")]
    Failed(String),
}

impl PromptError {
    pub(crate) fn to_rpc_error(&self, prompt: &str) -> RpcError {
        let prompt = wymcp_core::bound::echo(prompt);
        match self {
            PromptError::InvalidArguments(reason) => RpcError::new(
                RpcError::INVALID_PARAMS,
                format!("Invalid arguments for prompt {prompt}: {reason}"),
                Some(json!({ "prompt": prompt })),
            ),
            PromptError::Failed(reason) => RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("Getting prompt {prompt} failed: {reason}"),
                Some(json!({ "prompt": prompt })),
            ),
        }
    }
}

/// A prompt: a name, declared arguments, and the messages it renders.
///
/// Every method but [`get`](Self::get) is called once, when the server is built. `get`
/// receives arguments already checked against the declaration: no unknown argument, every
/// required one present (a refusal is `-32602` naming the argument).
///
/// ```
/// use wymcp::prompt::{GetPromptResult, PromptArgument, PromptArguments, PromptError, PromptMessage};
/// use wymcp::Prompt;
/// use wymcp::{Content, Context};
///
/// struct Review;
///
/// impl Prompt for Review {
///     fn name(&self) -> &str { "code_review" }
///     fn description(&self) -> Option<String> { Some("Review a piece of code".into()) }
///     fn arguments(&self) -> Vec<PromptArgument> {
///         vec![PromptArgument::required("code").description("The code to review")]
///     }
///     async fn get(&self, args: PromptArguments, _ctx: Context) -> Result<GetPromptResult, PromptError> {
///         let code = args.get("code").map(String::as_str).unwrap_or_default();
///         Ok(GetPromptResult::new(vec![PromptMessage::user(Content::text(format!("Review:\n{code}")))]))
///     }
/// }
///
/// let server = wymcp::Server::builder().prompt(Review).build().unwrap();
/// assert_eq!(server.prompt_names(), ["code_review"]);
/// ```
pub trait Prompt: Send + Sync + 'static {
    /// The prompt's name (unique within the server).
    fn name(&self) -> &str;

    /// A display title (served from 2025-06-18 on). Default: none.
    fn title(&self) -> Option<String> {
        None
    }

    /// A description. Default: none.
    fn description(&self) -> Option<String> {
        None
    }

    /// The declared arguments. Default: none.
    fn arguments(&self) -> Vec<PromptArgument> {
        Vec::new()
    }

    /// Icons, MCP `Icon` objects (served from 2025-11-25 on). Default: none.
    fn icons(&self) -> Vec<Value> {
        Vec::new()
    }

    /// The OAuth scopes a caller must hold, all of them, to get this prompt (and to complete
    /// its arguments): RFC 6749 scope tokens, checked by
    /// [`build`](crate::ServerBuilder::build). A caller lacking one is refused `-32003`
    /// ([`RpcError::INSUFFICIENT_SCOPE`]; 403 with the step-up challenge over Streamable HTTP)
    /// and `prompts/list` leaves the prompt out (see
    /// [`ServerBuilder::visibility`](crate::ServerBuilder::visibility)). Default: none; a
    /// prompt made elsewhere (`#[wymcp::prompts]`) gets them with
    /// [`with_scopes`](Self::with_scopes).
    fn scopes(&self) -> Vec<String> {
        Vec::new()
    }

    /// This prompt, needing `scopes` ([`scopes`](Self::scopes)) instead of its own.
    ///
    /// ```
    /// use wymcp::Prompt;
    /// use wymcp::prompt::{PromptArguments, PromptError, GetPromptResult};
    /// use wymcp::Context;
    ///
    /// struct Plan;
    /// impl Prompt for Plan {
    ///     fn name(&self) -> &str { "plan" }
    ///     async fn get(&self, _: PromptArguments, _: Context) -> Result<GetPromptResult, PromptError> {
    ///         Ok(GetPromptResult::new(Vec::new()))
    ///     }
    /// }
    ///
    /// let plan = Plan.with_scopes(["tasks:read"]);
    /// assert_eq!(plan.scopes(), ["tasks:read"]);
    /// let server = wymcp::Server::builder().prompt(plan).build()?;
    /// assert_eq!(server.declared_scopes(), ["tasks:read"]);
    /// # Ok::<(), wymcp::ConfigurationError>(())
    /// ```
    fn with_scopes<I, S>(self, scopes: I) -> Scoped<Self>
    where
        Self: Sized,
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Scoped {
            prompt: self,
            scopes: scopes.into_iter().map(Into::into).collect(),
        }
    }

    /// Renders the prompt with `arguments`.
    fn get(
        &self,
        arguments: PromptArguments,
        ctx: Context,
    ) -> impl Future<Output = Result<GetPromptResult, PromptError>> + Send;
}

/// A prompt with the scopes [`Prompt::with_scopes`] gave it; everything else is the prompt's.
#[derive(Debug, Clone)]
#[must_use]
pub struct Scoped<P> {
    prompt: P,
    scopes: Vec<String>,
}

impl<P: Prompt> Prompt for Scoped<P> {
    fn name(&self) -> &str {
        self.prompt.name()
    }
    fn title(&self) -> Option<String> {
        self.prompt.title()
    }
    fn description(&self) -> Option<String> {
        self.prompt.description()
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        self.prompt.arguments()
    }
    fn icons(&self) -> Vec<Value> {
        self.prompt.icons()
    }
    fn scopes(&self) -> Vec<String> {
        self.scopes.clone()
    }
    fn get(
        &self,
        arguments: PromptArguments,
        ctx: Context,
    ) -> impl Future<Output = Result<GetPromptResult, PromptError>> + Send {
        self.prompt.get(arguments, ctx)
    }
}

/// The object-safe form of [`Prompt`].
pub(crate) trait DynPrompt: Send + Sync {
    fn name(&self) -> &str;
    fn title(&self) -> Option<String>;
    fn description(&self) -> Option<String>;
    fn arguments(&self) -> Vec<PromptArgument>;
    fn icons(&self) -> Vec<Value>;
    fn scopes(&self) -> Vec<String>;
    fn get(
        &self,
        arguments: PromptArguments,
        ctx: Context,
    ) -> BoxFuture<'_, Result<GetPromptResult, PromptError>>;
}

impl<T: Prompt> DynPrompt for T {
    fn name(&self) -> &str {
        Prompt::name(self)
    }
    fn title(&self) -> Option<String> {
        Prompt::title(self)
    }
    fn description(&self) -> Option<String> {
        Prompt::description(self)
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        Prompt::arguments(self)
    }
    fn icons(&self) -> Vec<Value> {
        Prompt::icons(self)
    }
    fn scopes(&self) -> Vec<String> {
        Prompt::scopes(self)
    }
    fn get(
        &self,
        arguments: PromptArguments,
        ctx: Context,
    ) -> BoxFuture<'_, Result<GetPromptResult, PromptError>> {
        Box::pin(Prompt::get(self, arguments, ctx))
    }
}
