//! [`GatewayConfig`]: the upstreams a gateway serves, read from the `mcpServers` JSON that
//! Claude Desktop, Cursor and VS Code use, or built in code with [`UpstreamConfig`].

use crate::openapi::{ApiAuth, OpenApiUpstream};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::ConfigError;

/// The default [`UpstreamConfig::timeout`]: 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`UpstreamConfig::max_answer_bytes`]: 4 MiB.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// The default [`UpstreamConfig::restart_backoff`]: the first restart of a dead upstream after
/// 500 ms, each next one after twice the wait before, at most 30 s apart.
pub const DEFAULT_RESTART_BACKOFF: (Duration, Duration) =
    (Duration::from_millis(500), Duration::from_secs(30));
/// The most bytes of a configuration file read: 1 MiB.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// How an upstream's tools are served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Expose {
    /// The upstream's tools become the actions of one action-dispatched tool named after
    /// the upstream (or of several, by [`UpstreamConfig::group`]): a few definitions for the
    /// model to read, and wymcp's gates refuse a bad call before the upstream sees it.
    #[default]
    Actions,
    /// Each upstream tool served as a tool of its own, `<prefix>_<tool>` (as it is with an
    /// empty prefix), its input and output schemas and annotations kept.
    Tools,
}

/// What the gateway does with an upstream tool whose input schema wymcp does not accept as an
/// action schema (a `$ref` to a definition outside `properties`, a `required` naming an
/// undeclared property, ...). Either way the start-up report says which tool and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SchemaFallback {
    /// Serve it with the widest schema the contract allows: the same property names, each of
    /// any value, the same required ones; the upstream checks the values itself.
    #[default]
    Widen,
    /// Leave the tool out.
    Omit,
}

/// The era of the gateway's link to an upstream over Streamable HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Era {
    /// MCP 2026-07-28 stateless where the upstream offers it, else the newest session-era
    /// revision both speak.
    #[default]
    Auto,
    /// The newest session-era revision both speak (2025-11-25 and before), whatever the
    /// upstream offers: `initialize`, a session, and resumable streams. The upstream's SSE
    /// polling (SEP-1699, a long call's stream closed mid-call and resumed with
    /// `Last-Event-ID`) then reaches the gateway, which ends its own caller's stream too
    /// (served with [`sse_polling`](wymcp::transport::http::StreamableHttp::sse_polling));
    /// a stateless stream is not resumable. The stateless era's own features (an upstream's
    /// skills, tasks) are then not reached.
    Session,
}

/// Where an upstream is reached.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// A command the gateway spawns, speaking MCP on its stdin and stdout.
    Stdio {
        /// The program (found on `PATH`).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Environment variables added to those it inherits.
        env: Vec<(String, String)>,
        /// Its working directory (default: the gateway's).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint's URL.
        url: String,
        /// Headers sent on every request (a bearer token, say).
        headers: Vec<(String, String)>,
    },
}

impl std::fmt::Debug for Target {
    /// Environment values and header values stay out: they are often secrets.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
                f.debug_struct("Stdio")
                    .field("command", command)
                    .field("args", args)
                    .field("env", &names)
                    .field("cwd", cwd)
                    .finish()
            }
            Target::Http { url, headers } => {
                let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
                f.debug_struct("Http")
                    .field("url", url)
                    .field("headers", &names)
                    .finish()
            }
        }
    }
}

/// One upstream MCP server and how the gateway serves it.
///
/// ```
/// use std::time::Duration;
/// use wymcp_gateway::{Expose, UpstreamConfig};
///
/// let files = UpstreamConfig::stdio("files", "npx")
///     .args(["-y", "@modelcontextprotocol/server-filesystem", "/srv/shared"])
///     .group("files_read", ["read_*", "list_*", "search_*", "get_*"])
///     .scopes("write_file", ["files:write"])
///     .timeout(Duration::from_secs(10));
/// let remote = UpstreamConfig::http("remote", "http://127.0.0.1:9000/mcp")
///     .header("authorization", "Bearer s3cret")
///     .expose(Expose::Tools)
///     .prefix("");
/// assert_eq!(files.name(), "files");
/// assert_eq!(remote.expose_mode(), Expose::Tools);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamConfig {
    pub(crate) name: String,
    pub(crate) target: Target,
    pub(crate) expose: Expose,
    pub(crate) prefix: Option<String>,
    pub(crate) groups: Vec<(String, Vec<String>)>,
    pub(crate) scopes: BTreeMap<String, Vec<String>>,
    pub(crate) timeout: Duration,
    pub(crate) max_answer_bytes: usize,
    pub(crate) fallback: SchemaFallback,
    pub(crate) restart_backoff: (Duration, Duration),
    pub(crate) era: Era,
}

impl UpstreamConfig {
    fn new(name: impl Into<String>, target: Target) -> Self {
        UpstreamConfig {
            name: name.into(),
            target,
            expose: Expose::default(),
            prefix: None,
            groups: Vec::new(),
            scopes: BTreeMap::new(),
            timeout: DEFAULT_TIMEOUT,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            fallback: SchemaFallback::default(),
            restart_backoff: DEFAULT_RESTART_BACKOFF,
            era: Era::Auto,
        }
    }

    /// An upstream spawned as `command`, speaking MCP over its stdin and stdout.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>) -> Self {
        Self::new(
            name,
            Target::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
            },
        )
    }

    /// An upstream reached over Streamable HTTP at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self::new(
            name,
            Target::Http {
                url: url.into(),
                headers: Vec::new(),
            },
        )
    }

    /// Arguments of the command, after those given before (stdio; ignored over HTTP).
    pub fn args<I, S>(mut self, more: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        if let Target::Stdio { args, .. } = &mut self.target {
            args.extend(more.into_iter().map(Into::into));
        }
        self
    }

    /// An environment variable of the command (stdio; ignored over HTTP).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Stdio { env, .. } = &mut self.target {
            env.push((name.into(), value.into()));
        }
        self
    }

    /// The command's working directory (stdio; ignored over HTTP).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        if let Target::Stdio { cwd, .. } = &mut self.target {
            *cwd = Some(dir.into());
        }
        self
    }

    /// A header sent on every request (HTTP; ignored over stdio).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Http { headers, .. } = &mut self.target {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// How the upstream's tools are served (default [`Expose::Actions`]).
    pub fn expose(mut self, expose: Expose) -> Self {
        self.expose = expose;
        self
    }

    /// The prefix of the served names (default: the upstream's name). In [`Expose::Tools`]
    /// mode a tool is served as `<prefix>_<tool>`, or as it is with `""`; in
    /// [`Expose::Actions`] mode the action tool is named `<prefix>` (the upstream's name
    /// with `""`).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// [`Expose::Actions`]: the upstream tools whose names match one of `patterns` (`*`
    /// matches any run of characters) become the actions of a tool named `tool`, instead of
    /// the one named after the upstream. The first group a name matches wins.
    pub fn group<I, S>(mut self, tool: impl Into<String>, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.groups
            .push((tool.into(), patterns.into_iter().map(Into::into).collect()));
        self
    }

    /// The OAuth scopes a caller must hold to call (and see) the upstream tool `tool`: the
    /// action's scopes in [`Expose::Actions`] mode, the tool's in [`Expose::Tools`] mode.
    pub fn scopes<I, S>(mut self, tool: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// The time the upstream has to answer one request (the handshake's included); past it
    /// the call is refused naming the upstream and the timeout, and the request cancelled
    /// upstream. Default [`DEFAULT_TIMEOUT`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The most bytes of one upstream answer the gateway reads (over stdio, of one line);
    /// more is refused naming the limit. Default [`DEFAULT_MAX_ANSWER_BYTES`].
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// What to do with a tool whose input schema wymcp does not accept as an action schema
    /// (default [`SchemaFallback::Widen`]).
    pub fn on_unacceptable_schema(mut self, fallback: SchemaFallback) -> Self {
        self.fallback = fallback;
        self
    }

    /// The wait before restarting a dead upstream (`first`), doubled after each failed
    /// restart up to `max`. Default [`DEFAULT_RESTART_BACKOFF`].
    pub fn restart_backoff(mut self, first: Duration, max: Duration) -> Self {
        self.restart_backoff = (first, max.max(first));
        self
    }

    /// The era the gateway speaks to an HTTP upstream (default [`Era::Auto`]; ignored over
    /// stdio, which has no streams to resume).
    pub fn era(mut self, era: Era) -> Self {
        self.era = era;
        self
    }

    /// The upstream's name (the key of `mcpServers`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How its tools are served.
    pub fn expose_mode(&self) -> Expose {
        self.expose
    }

    /// Where it is reached.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The prefix served names carry: the one given, else the upstream's name.
    pub(crate) fn effective_prefix(&self) -> &str {
        self.prefix.as_deref().unwrap_or(&self.name)
    }
}

/// Every upstream a gateway serves.
///
/// ```
/// use wymcp_gateway::GatewayConfig;
///
/// let config = GatewayConfig::from_json(r#"{"mcpServers": {
///     "time": {"command": "uvx", "args": ["mcp-server-time"], "expose": "tools", "prefix": ""},
///     "remote": {"url": "http://127.0.0.1:9000/mcp", "headers": {"x-tenant": "acme"},
///                "timeout_ms": 5000}
/// }}"#).unwrap();
/// let names: Vec<&str> = config.upstreams().iter().map(|u| u.name()).collect();
/// assert_eq!(names, ["remote", "time"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GatewayConfig {
    upstreams: Vec<UpstreamConfig>,
    apis: Vec<OpenApiUpstream>,
}

impl GatewayConfig {
    /// No upstream yet.
    pub fn new() -> Self {
        GatewayConfig::default()
    }

    /// Adds an upstream.
    pub fn upstream(mut self, upstream: UpstreamConfig) -> Self {
        self.upstreams.push(upstream);
        self
    }

    /// The upstreams, in the order given (a file's: by name).
    pub fn upstreams(&self) -> &[UpstreamConfig] {
        &self.upstreams
    }

    /// Adds a REST API served from its OpenAPI document.
    pub fn openapi(mut self, api: OpenApiUpstream) -> Self {
        self.apis.push(api);
        self
    }

    /// The OpenAPI upstreams, in the order given (a file's: by name).
    pub fn apis(&self) -> &[OpenApiUpstream] {
        &self.apis
    }

    /// Reads the configuration file at `path` (at most [`MAX_CONFIG_BYTES`]).
    pub fn from_file(path: impl AsRef<Path>) -> Result<GatewayConfig, ConfigError> {
        use std::io::Read as _;
        let path = path.as_ref();
        let unreadable = |source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(unreadable)?;
        let mut text = String::new();
        file.take(MAX_CONFIG_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(unreadable)?;
        if text.len() as u64 > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge {
                max: MAX_CONFIG_BYTES,
            });
        }
        GatewayConfig::from_json(&text)
    }

    /// Reads the `mcpServers` JSON: `{"mcpServers": {"NAME": {"command", "args", "env",
    /// "cwd"} | {"url", "headers"}}}`, each server with wymcp's optional keys `expose`
    /// (`"actions"` | `"tools"`), `prefix`, `groups` (`{"tool": ["pattern", ...]}`),
    /// `scopes` (`{"upstream tool": ["scope", ...]}`), `timeout_ms`, `max_answer_bytes`,
    /// `on_unacceptable_schema` (`"widen"` | `"omit"`) and `era` (`"auto"` | `"session"`,
    /// [`Era`]). Other keys (`type`,
    /// `disabled`, ...) are left for the apps that read them; a `disabled: true` server is
    /// not served.
    ///
    /// A server with `"openapi": "FILE-or-URL"` instead is a REST API
    /// ([`OpenApiUpstream`]), with the optional keys `baseUrl`, `include`, `exclude`,
    /// `timeout_ms`, `max_answer_bytes` and `auth`: `{"type": "bearer", "token_env": VAR}`,
    /// `{"type": "header" | "query", "name": NAME, "value_env": VAR}` or
    /// `{"type": "basic", "user_env": VAR, "password_env": VAR}`, each secret named by the
    /// environment variable holding it.
    pub fn from_json(text: &str) -> Result<GatewayConfig, ConfigError> {
        let file: File = serde_json::from_str(text).map_err(ConfigError::Json)?;
        let mut config = GatewayConfig::new();
        for (name, server) in file.mcp_servers {
            if server.disabled {
                continue;
            }
            if server.openapi.is_some() {
                config = config.openapi(server.into_api(name)?);
            } else {
                config = config.upstream(server.into_upstream(name)?);
            }
        }
        Ok(config)
    }
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, ServerEntry>,
}

#[derive(Deserialize)]
struct ServerEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    expose: Option<String>,
    prefix: Option<String>,
    #[serde(default)]
    groups: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    scopes: BTreeMap<String, Vec<String>>,
    timeout_ms: Option<u64>,
    max_answer_bytes: Option<usize>,
    on_unacceptable_schema: Option<String>,
    era: Option<String>,
    #[serde(default)]
    disabled: bool,
    /// An OpenAPI upstream's document (a path or a URL), and its keys.
    openapi: Option<String>,
    #[serde(rename = "baseUrl")]
    base_url: Option<String>,
    auth: Option<ApiAuth>,
    #[serde(default)]
    include: Vec<String>,
    #[serde(default)]
    exclude: Vec<String>,
    /// VS Code's `"type": "stdio" | "http"`: read, not needed.
    #[serde(default, rename = "type")]
    _kind: Option<Value>,
}

impl ServerEntry {
    /// The entry as an OpenAPI upstream (its `openapi` key is set).
    fn into_api(self, name: String) -> Result<OpenApiUpstream, ConfigError> {
        if self.command.is_some() || self.url.is_some() {
            return Err(ConfigError::BothTargets { server: name });
        }
        let mut api = OpenApiUpstream::new(&name, self.openapi.unwrap_or_default());
        if let Some(url) = self.base_url {
            api = api.base_url(url);
        }
        if let Some(auth) = self.auth {
            api = api.auth(auth);
        }
        for pattern in self.include {
            api = api.include(pattern);
        }
        for pattern in self.exclude {
            api = api.exclude(pattern);
        }
        if let Some(timeout) = timeout(&name, self.timeout_ms)? {
            api = api.timeout(timeout);
        }
        if let Some(bytes) = self.max_answer_bytes {
            api = api.max_answer_bytes(bytes);
        }
        Ok(api)
    }

    fn into_upstream(self, name: String) -> Result<UpstreamConfig, ConfigError> {
        let mut upstream = match (self.command, self.url) {
            (Some(command), None) => {
                let mut upstream = UpstreamConfig::stdio(&name, command).args(self.args);
                for (key, value) in self.env {
                    upstream = upstream.env(key, value);
                }
                if let Some(cwd) = self.cwd {
                    upstream = upstream.cwd(cwd);
                }
                upstream
            }
            (None, Some(url)) => {
                let mut upstream = UpstreamConfig::http(&name, url);
                for (key, value) in self.headers {
                    upstream = upstream.header(key, value);
                }
                upstream
            }
            (Some(_), Some(_)) => return Err(ConfigError::BothTargets { server: name }),
            (None, None) => return Err(ConfigError::NoTarget { server: name }),
        };
        upstream.expose = match self.expose.as_deref() {
            None | Some("actions") => Expose::Actions,
            Some("tools") => Expose::Tools,
            Some(other) => {
                return Err(ConfigError::Value {
                    server: name,
                    key: "expose",
                    value: other.to_owned(),
                    expected: "\"actions\" or \"tools\"",
                });
            }
        };
        upstream.fallback = match self.on_unacceptable_schema.as_deref() {
            None | Some("widen") => SchemaFallback::Widen,
            Some("omit") => SchemaFallback::Omit,
            Some(other) => {
                return Err(ConfigError::Value {
                    server: name,
                    key: "on_unacceptable_schema",
                    value: other.to_owned(),
                    expected: "\"widen\" or \"omit\"",
                });
            }
        };
        upstream.era = match self.era.as_deref() {
            None | Some("auto") => Era::Auto,
            Some("session") => Era::Session,
            Some(other) => {
                return Err(ConfigError::Value {
                    server: name,
                    key: "era",
                    value: other.to_owned(),
                    expected: "\"auto\" or \"session\"",
                });
            }
        };
        upstream.prefix = self.prefix;
        upstream.groups = self.groups.into_iter().collect();
        upstream.scopes = self.scopes;
        if let Some(timeout) = timeout(&name, self.timeout_ms)? {
            upstream.timeout = timeout;
        }
        if let Some(bytes) = self.max_answer_bytes {
            upstream.max_answer_bytes = bytes;
        }
        Ok(upstream)
    }
}

/// A server's `timeout_ms` as a duration; 0 is refused, naming the server and the key.
fn timeout(server: &str, ms: Option<u64>) -> Result<Option<Duration>, ConfigError> {
    match ms {
        Some(0) => Err(ConfigError::Value {
            server: server.to_owned(),
            key: "timeout_ms",
            value: "0".to_owned(),
            expected: "a number of milliseconds above 0",
        }),
        ms => Ok(ms.map(Duration::from_millis)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_desktop_config_reads_as_it_is() {
        let config = GatewayConfig::from_json(
            r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "x"],
                "env": {"K": "v"}, "cwd": "/tmp"}, "off": {"command": "x", "disabled": true}}}"#,
        )
        .unwrap();
        let [fs] = config.upstreams() else {
            panic!("one upstream: {config:?}")
        };
        assert_eq!(fs.expose, Expose::Actions);
        assert_eq!(fs.effective_prefix(), "fs");
        assert_eq!(
            fs.target,
            Target::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "x".into()],
                env: vec![("K".into(), "v".into())],
                cwd: Some("/tmp".into()),
            }
        );
    }

    #[test]
    fn era_reads_auto_and_session_and_refuses_anything_else() {
        let config = GatewayConfig::from_json(
            r#"{"mcpServers": {"s": {"url": "http://x", "era": "session"},
                "a": {"url": "http://y", "era": "auto"}, "d": {"url": "http://z"}}}"#,
        )
        .unwrap();
        let eras: Vec<(&str, Era)> = config
            .upstreams()
            .iter()
            .map(|u| (u.name(), u.era))
            .collect();
        assert_eq!(
            eras,
            [("a", Era::Auto), ("d", Era::Auto), ("s", Era::Session)]
        );
        let err = GatewayConfig::from_json(
            r#"{"mcpServers": {"s": {"url": "http://x", "era": "stateless"}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "server \"s\": \"era\" is \"stateless\"; expected \"auto\" or \"session\""
        );
    }

    #[test]
    fn a_wrong_value_names_the_server_and_the_key() {
        let err = GatewayConfig::from_json(
            r#"{"mcpServers": {"a": {"url": "http://x", "expose": "all"}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "server \"a\": \"expose\" is \"all\"; expected \"actions\" or \"tools\""
        );
        for entry in [
            r#"{"command": "x", "timeout_ms": 0}"#,
            r#"{"openapi": "a.json", "timeout_ms": 0}"#,
        ] {
            let err = GatewayConfig::from_json(&format!(r#"{{"mcpServers": {{"t": {entry}}}}}"#))
                .unwrap_err();
            assert_eq!(
                err.to_string(),
                "server \"t\": \"timeout_ms\" is \"0\"; expected a number of milliseconds above 0",
                "{entry}"
            );
        }
        let err = GatewayConfig::from_json(r#"{"mcpServers": {"b": {}}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "server \"b\": none of \"command\", \"url\" and \"openapi\" is given"
        );
    }

    #[test]
    fn an_openapi_server_reads_with_its_keys_and_its_secrets_named_by_variable() {
        let config = GatewayConfig::from_json(
            r#"{"mcpServers": {"gh": {"openapi": "https://x/api.json", "baseUrl": "https://api",
                "include": ["repos"], "exclude": ["DELETE *"], "timeout_ms": 2000,
                "auth": {"type": "header", "name": "X-Key", "value_env": "GH_KEY"}}}}"#,
        )
        .unwrap();
        assert!(config.upstreams().is_empty());
        let expected = OpenApiUpstream::new("gh", "https://x/api.json")
            .base_url("https://api")
            .include("repos")
            .exclude("DELETE *")
            .timeout(Duration::from_millis(2000))
            .auth(ApiAuth::Header {
                name: "X-Key".into(),
                value_env: "GH_KEY".into(),
            });
        assert_eq!(config.apis(), [expected]);
        let err = GatewayConfig::from_json(
            r#"{"mcpServers": {"c": {"openapi": "a.json", "command": "x"}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "server \"c\": more than one of \"command\", \"url\" and \"openapi\" is given; give one"
        );
        // A secret written in the file itself is not a key the gateway reads.
        let err = GatewayConfig::from_json(
            r#"{"mcpServers": {"d": {"openapi": "a.json", "auth": {"type": "bearer", "token": "s3cret"}}}}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("token_env"), "{err}");
        assert!(!err.to_string().contains("s3cret"), "{err}");
        // Forwarding the caller's own token is chosen by name, with nothing else to say.
        let config = GatewayConfig::from_json(
            r#"{"mcpServers": {"mine": {"openapi": "a.json", "auth": {"type": "caller"}}}}"#,
        )
        .unwrap();
        assert_eq!(config.apis()[0].auth, Some(ApiAuth::Caller));
    }

    #[tokio::test]
    async fn an_openapi_upstream_whose_variable_is_unset_is_reported_and_not_served() {
        let config = GatewayConfig::new().openapi(
            OpenApiUpstream::new("zoo", "/nonexistent/openapi.json").auth(ApiAuth::Bearer {
                token_env: "WYMCP_GATEWAY_TEST_UNSET".into(),
            }),
        );
        let gateway = crate::Gateway::start(config).await;
        let notices: Vec<String> = gateway.notices().iter().map(|n| n.to_string()).collect();
        assert_eq!(
            notices,
            [
                "upstream zoo: not served: the environment variable WYMCP_GATEWAY_TEST_UNSET is not set"
            ]
        );
        assert!(gateway.upstreams().is_empty());
    }
}
