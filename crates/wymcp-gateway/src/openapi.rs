//! [`OpenApiUpstream`]: a REST API described by OpenAPI, served beside the MCP upstreams as
//! action tools (one per tag, one action per operation) by `wymcp-openapi`.

use std::time::Duration;

use wymcp_openapi::{Auth, OpenApi, OpenApiBuilder};

/// A REST API the gateway serves from its OpenAPI document (a file or an http(s) URL): one
/// action tool per tag, the operations without a tag under a tool named after the upstream.
/// Its credentials are read from the environment when the gateway starts, never from the
/// configuration itself, and never logged.
///
/// ```
/// use wymcp_gateway::{ApiAuth, OpenApiUpstream};
///
/// let github = OpenApiUpstream::new("github", "https://example.com/api.github.com.json")
///     .base_url("https://api.github.com")
///     .auth(ApiAuth::Bearer { token_env: "GITHUB_TOKEN".into() })
///     .include("repos")
///     .exclude("DELETE *");
/// assert_eq!(github.name(), "github");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenApiUpstream {
    pub(crate) name: String,
    pub(crate) source: String,
    pub(crate) base_url: Option<String>,
    pub(crate) auth: Option<ApiAuth>,
    pub(crate) include: Vec<String>,
    pub(crate) exclude: Vec<String>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_answer_bytes: Option<usize>,
}

/// How the gateway authenticates to an OpenAPI upstream: each secret named by the environment
/// variable that holds it. In a configuration file: `{"type": "bearer", "token_env": VAR}`,
/// `{"type": "header" | "query", "name": NAME, "value_env": VAR}`,
/// `{"type": "basic", "user_env": VAR, "password_env": VAR}`, `{"type": "caller"}` (any other
/// key is refused, so a secret written in the file is never read).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
#[non_exhaustive]
pub enum ApiAuth {
    /// `Authorization: Bearer <token>`.
    Bearer {
        /// The variable holding the token.
        token_env: String,
    },
    /// An API key in the header `name`.
    Header {
        /// The header.
        name: String,
        /// The variable holding the key.
        value_env: String,
    },
    /// An API key in the query parameter `name`.
    Query {
        /// The query parameter.
        name: String,
        /// The variable holding the key.
        value_env: String,
    },
    /// HTTP basic auth.
    Basic {
        /// The variable holding the user.
        user_env: String,
        /// The variable holding the password.
        password_env: String,
    },
    /// The downstream caller's own bearer token, forwarded
    /// ([`Auth::caller_bearer`](wymcp_openapi::Auth::caller_bearer): token passthrough, for an
    /// API that accepts the tokens issued for the gateway; the gateway must run with auth).
    Caller,
}

impl OpenApiUpstream {
    /// The API `name`, its document at `source`: a path, or an `http://`/`https://` URL.
    pub fn new(name: impl Into<String>, source: impl Into<String>) -> Self {
        OpenApiUpstream {
            name: name.into(),
            source: source.into(),
            base_url: None,
            auth: None,
            include: Vec::new(),
            exclude: Vec::new(),
            timeout: None,
            max_answer_bytes: None,
        }
    }

    /// Where calls go (default: the document's first server).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// How calls authenticate.
    pub fn auth(mut self, auth: ApiAuth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Serves only the operations `pattern` names (see `wymcp_openapi::OpenApiBuilder::include`).
    pub fn include(mut self, pattern: impl Into<String>) -> Self {
        self.include.push(pattern.into());
        self
    }

    /// Leaves out the operations `pattern` names.
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// The longest one call waits (default `wymcp_openapi::DEFAULT_TIMEOUT`).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The largest answer read from the API (default
    /// `wymcp_openapi::DEFAULT_MAX_ANSWER_BYTES`).
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = Some(bytes);
        self
    }

    /// The upstream's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Loads the document and makes its tools, or says why not (a missing variable named, a
    /// document refused with `wymcp_openapi`'s reason).
    pub(crate) async fn load(&self) -> Result<OpenApi, String> {
        let mut builder: OpenApiBuilder = OpenApi::builder().untagged_tool(&self.name);
        if let Some(url) = &self.base_url {
            builder = builder.base_url(url);
        }
        if let Some(auth) = &self.auth {
            builder = builder.auth(auth.resolve()?);
        }
        for pattern in &self.include {
            builder = builder.include(pattern);
        }
        for pattern in &self.exclude {
            builder = builder.exclude(pattern);
        }
        if let Some(timeout) = self.timeout {
            builder = builder.timeout(timeout);
        }
        if let Some(bytes) = self.max_answer_bytes {
            builder = builder.max_answer_bytes(bytes);
        }
        let loaded = if self.source.starts_with("http://") || self.source.starts_with("https://") {
            builder.load_url(&self.source).await
        } else {
            builder.load_file(&self.source)
        };
        loaded.map_err(|e| e.to_string())
    }
}

impl ApiAuth {
    /// The credentials, read from the environment now.
    fn resolve(&self) -> Result<Auth, String> {
        let read = |variable: &str| {
            std::env::var(variable)
                .map_err(|_| format!("the environment variable {variable} is not set"))
        };
        Ok(match self {
            ApiAuth::Bearer { token_env } => Auth::bearer(read(token_env)?),
            ApiAuth::Header { name, value_env } => Auth::api_key_header(name, read(value_env)?),
            ApiAuth::Query { name, value_env } => Auth::api_key_query(name, read(value_env)?),
            ApiAuth::Basic {
                user_env,
                password_env,
            } => Auth::basic(read(user_env)?, read(password_env)?),
            ApiAuth::Caller => Auth::caller_bearer(),
        })
    }
}
