//! The settings of a load: where calls go, how they authenticate, and the limits.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::auth::Auth;
use crate::call::Api;
use crate::document;
use crate::error::LoadError;
use crate::operation::{self, Bounds, METHODS, Read};
use crate::tool::OpenApiTool;
use crate::{OpenApi, Skipped};
use wymcp::ActionTool as _;

/// Default of [`OpenApiBuilder::max_document_bytes`]: 32 MiB (GitHub's REST description is
/// about 12 MB).
pub const DEFAULT_MAX_DOCUMENT_BYTES: usize = 32 * 1024 * 1024;
/// Default of [`OpenApiBuilder::max_operations`].
pub const DEFAULT_MAX_OPERATIONS: usize = 2_000;
/// Default of [`OpenApiBuilder::max_ref_depth`].
pub const DEFAULT_MAX_REF_DEPTH: usize = 32;
/// Default of [`OpenApiBuilder::max_schema_bytes`]: 256 KiB.
pub const DEFAULT_MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Default of [`OpenApiBuilder::max_answer_bytes`]: 1 MiB.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 1024 * 1024;
/// Default of [`OpenApiBuilder::timeout`]: 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default of [`OpenApiBuilder::max_error_body_chars`].
pub const DEFAULT_MAX_ERROR_BODY_CHARS: usize = 1_024;

/// How to load a document and call its API. Made by [`OpenApi::builder`].
///
/// ```
/// use std::time::Duration;
/// use wymcp_openapi::{Auth, OpenApi};
///
/// let api = OpenApi::builder()
///     .base_url("http://127.0.0.1:8080/v1")
///     .auth(Auth::bearer("token"))
///     .timeout(Duration::from_secs(10))
///     .load_str(r#"{"openapi": "3.1.0", "info": {"title": "Empty", "version": "1"}, "paths": {}}"#)
///     .unwrap();
/// assert!(api.tool_names().is_empty());
/// ```
#[derive(Debug, Clone)]
pub struct OpenApiBuilder {
    base_url: Option<String>,
    auth: Option<Auth>,
    untagged_tool: String,
    max_document_bytes: usize,
    max_operations: usize,
    max_ref_depth: usize,
    max_schema_bytes: usize,
    max_answer_bytes: usize,
    timeout: Duration,
    max_error_body_chars: usize,
    include: Vec<String>,
    exclude: Vec<String>,
}

impl Default for OpenApiBuilder {
    fn default() -> Self {
        Self {
            base_url: None,
            auth: None,
            untagged_tool: "api".into(),
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            max_operations: DEFAULT_MAX_OPERATIONS,
            max_ref_depth: DEFAULT_MAX_REF_DEPTH,
            max_schema_bytes: DEFAULT_MAX_SCHEMA_BYTES,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            timeout: DEFAULT_TIMEOUT,
            max_error_body_chars: DEFAULT_MAX_ERROR_BODY_CHARS,
            include: Vec::new(),
            exclude: Vec::new(),
        }
    }
}

impl OpenApiBuilder {
    /// Where calls go (an absolute `http` or `https` URL; the operation's path is appended).
    /// Default: the document's first server, its variables at their defaults.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The credentials every call carries. Default: none.
    pub fn auth(mut self, auth: Auth) -> Self {
        self.auth = Some(auth);
        self
    }

    /// The name of the tool of the operations without a tag. Default: `api`.
    pub fn untagged_tool(mut self, name: impl Into<String>) -> Self {
        self.untagged_tool = name.into();
        self
    }

    /// The largest document read, in bytes. Default: [`DEFAULT_MAX_DOCUMENT_BYTES`].
    pub fn max_document_bytes(mut self, bytes: usize) -> Self {
        self.max_document_bytes = bytes;
        self
    }

    /// The most operations a document may declare. Default: [`DEFAULT_MAX_OPERATIONS`].
    pub fn max_operations(mut self, max: usize) -> Self {
        self.max_operations = max;
        self
    }

    /// How many `$ref`s may nest while one is resolved (a recursive schema ends at its first
    /// repetition, not at this bound). Default: [`DEFAULT_MAX_REF_DEPTH`].
    pub fn max_ref_depth(mut self, depth: usize) -> Self {
        self.max_ref_depth = depth;
        self
    }

    /// The largest resolved schema of one operation (its parameters and request body, about
    /// their compact JSON bytes). Default: [`DEFAULT_MAX_SCHEMA_BYTES`].
    pub fn max_schema_bytes(mut self, bytes: usize) -> Self {
        self.max_schema_bytes = bytes;
        self
    }

    /// The most bytes read of one answer of the API. Default: [`DEFAULT_MAX_ANSWER_BYTES`].
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// The longest one call may take, from sending to the answer's last byte. Default:
    /// [`DEFAULT_TIMEOUT`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many characters of a non-2xx answer's body the error quotes. Default:
    /// [`DEFAULT_MAX_ERROR_BODY_CHARS`].
    pub fn max_error_body_chars(mut self, chars: usize) -> Self {
        self.max_error_body_chars = chars;
        self
    }

    /// Serves only the operations `pattern` names, with every other `include` (none: every
    /// operation). A pattern names an operation by its `operationId`, its action name, one of
    /// its tags, or its method and path as `GET /pets/{id}`; a trailing `*` matches any rest
    /// (`repos/*`, `GET /repos/*`). The operations left out are not reported as skipped.
    ///
    /// ```
    /// let api = wymcp_openapi::OpenApi::builder()
    ///     .base_url("http://127.0.0.1:8080")
    ///     .include("pets")
    ///     .exclude("DELETE *")
    ///     .load_str(r#"{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {
    ///         "/pets": {"get": {"operationId": "listPets", "tags": ["pets"]},
    ///                   "delete": {"operationId": "dropPets", "tags": ["pets"]}},
    ///         "/users": {"get": {"operationId": "listUsers", "tags": ["users"]}}}}"#)?;
    /// assert_eq!(api.tool_names(), ["pets"]);
    /// # Ok::<(), wymcp_openapi::LoadError>(())
    /// ```
    pub fn include(mut self, pattern: impl Into<String>) -> Self {
        self.include.push(pattern.into());
        self
    }

    /// Leaves out the operations `pattern` names (the same patterns as
    /// [`include`](Self::include)), after the includes.
    pub fn exclude(mut self, pattern: impl Into<String>) -> Self {
        self.exclude.push(pattern.into());
        self
    }

    /// Fetches the document at `url` (http or https; JSON, or YAML) and loads it, reading at
    /// most [`max_document_bytes`](Self::max_document_bytes) within
    /// [`timeout`](Self::timeout). A relative server URL in the document (`/v3`) is resolved
    /// against `url`. `$ref`s to other documents are still refused: only the one document is
    /// fetched.
    pub async fn load_url(self, url: &str) -> Result<OpenApi, LoadError> {
        let fetch = |problem: String| LoadError::Fetch {
            url: url.to_owned(),
            problem,
        };
        let parsed = reqwest::Url::parse(url).map_err(|e| fetch(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(fetch("not an http or https URL".into()));
        }
        let client = reqwest::Client::builder()
            .timeout(self.timeout)
            .build()
            .map_err(|e| LoadError::Client {
                message: e.to_string(),
            })?;
        let mut response = client
            .get(parsed.clone())
            .header(
                "accept",
                "application/json, application/yaml, text/yaml, */*",
            )
            .send()
            .await
            .map_err(|e| fetch(e.to_string()))?;
        if !response.status().is_success() {
            return Err(fetch(format!("answered {}", response.status())));
        }
        let too_large = LoadError::DocumentTooLarge {
            limit: self.max_document_bytes,
        };
        if response
            .content_length()
            .is_some_and(|length| length > self.max_document_bytes as u64)
        {
            return Err(too_large);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| fetch(e.to_string()))? {
            if body.len() + chunk.len() > self.max_document_bytes {
                return Err(too_large);
            }
            body.extend_from_slice(&chunk);
        }
        let text = String::from_utf8(body).map_err(|_| LoadError::Parse {
            format: "UTF-8",
            message: "the document is not UTF-8 text".into(),
        })?;
        self.load_text(&text, Some(&parsed))
    }

    /// Loads the document in the file `path` (JSON, or YAML).
    pub fn load_file(self, path: impl AsRef<Path>) -> Result<OpenApi, LoadError> {
        let path = path.as_ref();
        let read = |source| LoadError::Read {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(read)?;
        let mut text = String::new();
        // One byte over the limit is enough to know the document is over it.
        file.take(self.max_document_bytes as u64 + 1)
            .read_to_string(&mut text)
            .map_err(read)?;
        self.load_str(&text)
    }

    /// Loads a document given as text (JSON, or YAML).
    pub fn load_str(self, text: &str) -> Result<OpenApi, LoadError> {
        self.load_text(text, None)
    }

    /// Loads `text`, fetched from `source` when it was.
    fn load_text(self, text: &str, source: Option<&reqwest::Url>) -> Result<OpenApi, LoadError> {
        if text.len() > self.max_document_bytes {
            return Err(LoadError::DocumentTooLarge {
                limit: self.max_document_bytes,
            });
        }
        let document = document::parse(text)?;
        document::check_version(&document)?;
        document::refuse_remote_refs(&document, &mut String::from("#"))?;
        let base_url = match &self.base_url {
            Some(url) => check_base_url(url)?,
            None => match (document::server_url(&document), source) {
                (Ok(url), _) => url,
                // A relative server URL is relative to where the document came from.
                (Err(found), Some(source)) => document::relative_server_url(&document)
                    .and_then(|relative| source.join(&relative).ok())
                    .filter(|url| matches!(url.scheme(), "http" | "https"))
                    .map(|url| url.as_str().trim_end_matches('/').to_owned())
                    .ok_or(LoadError::NoBaseUrl { found })?,
                (Err(found), None) => return Err(LoadError::NoBaseUrl { found }),
            },
        };
        // A redirect is followed only within the API's origin (at most 10): an API-key
        // header would otherwise travel to whatever host a redirect names (reqwest strips
        // only `Authorization` and `Cookie` across hosts). Another origin's redirect is
        // answered as the 3xx it is.
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if same_origin && attempt.previous().len() <= 10 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = reqwest::Client::builder()
            .redirect(redirects)
            .build()
            .map_err(|e| LoadError::Client {
                message: e.to_string(),
            })?;
        let api = Arc::new(Api {
            client,
            base_url,
            auth: self.auth.clone(),
            max_answer_bytes: self.max_answer_bytes,
            timeout: self.timeout,
            max_error_body_chars: self.max_error_body_chars,
        });
        self.tools(&document, api)
    }

    fn tools(&self, document: &Value, api: Arc<Api>) -> Result<OpenApi, LoadError> {
        let paths = match document.get("paths") {
            None => return Ok(OpenApi::new(Vec::new(), Vec::new())),
            Some(Value::Object(paths)) => paths,
            Some(_) => {
                return Err(LoadError::Malformed {
                    at: "#/paths".into(),
                    problem: "not an object".into(),
                });
            }
        };
        let declared = paths
            .values()
            .filter_map(Value::as_object)
            .map(|item| METHODS.iter().filter(|m| item.contains_key(**m)).count())
            .sum::<usize>();
        if declared > self.max_operations {
            return Err(LoadError::TooManyOperations {
                limit: self.max_operations,
            });
        }
        let bounds = Bounds {
            max_ref_depth: self.max_ref_depth,
            max_schema_bytes: self.max_schema_bytes,
        };
        let mut tools: BTreeMap<String, OpenApiTool> = BTreeMap::new();
        let mut skipped = Vec::new();
        for (path, item) in paths {
            let Some(item) = item.as_object() else {
                continue;
            };
            for method in METHODS {
                let Some(Value::Object(operation)) = item.get(method) else {
                    continue;
                };
                let label = format!("{} {path}", method.to_uppercase());
                if !self.selects(&label, operation) {
                    continue;
                }
                let operation =
                    match operation::read(document, path, method, item, operation, &bounds)? {
                        Read::Operation(operation) => operation,
                        Read::Skipped(reason) => {
                            skipped.push(Skipped::new(label, reason));
                            continue;
                        }
                    };
                let tag = operation
                    .tag
                    .clone()
                    .unwrap_or_else(|| self.untagged_tool.clone());
                let name = tool_name(&tag)?;
                let tool = tools.entry(name.clone()).or_insert_with(|| {
                    OpenApiTool::new(
                        name.clone(),
                        tag_description(document, &tag),
                        Vec::new(),
                        api.clone(),
                    )
                });
                if tool.has_action(&operation.action) {
                    skipped.push(Skipped::new(
                        label,
                        format!(
                            "its action name {} is taken in tool {name}",
                            operation.action
                        ),
                    ));
                    continue;
                }
                tool.push(operation);
            }
        }
        // The order of the document's `tags` list, then the other tags by name, the untagged
        // tool last (JSON objects, `paths` included, are read without their order).
        let listed: Vec<&str> = document
            .get("tags")
            .and_then(Value::as_array)
            .map(|tags| {
                tags.iter()
                    .filter_map(|t| t.get("name")?.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let untagged = tool_name(&self.untagged_tool)?;
        let mut tools: Vec<OpenApiTool> = tools.into_values().collect();
        tools.sort_by_key(|tool| {
            let name = tool.name();
            let position = listed
                .iter()
                .position(|tag| tool_name(tag).is_ok_and(|t| t == name))
                .unwrap_or(usize::MAX);
            (name == untagged, position, name.to_owned())
        });
        Ok(OpenApi::new(tools, skipped))
    }
}

impl OpenApiBuilder {
    /// Whether the includes and excludes select the operation `label` (`GET /pets`).
    fn selects(&self, label: &str, operation: &serde_json::Map<String, Value>) -> bool {
        let id = operation.get("operationId").and_then(Value::as_str);
        let action = id.map(operation::sanitize);
        let tags = operation.get("tags").and_then(Value::as_array);
        let names = |pattern: &str| {
            let matches = |name: &str| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == pattern,
            };
            matches(label)
                || id.is_some_and(matches)
                || action.as_deref().is_some_and(matches)
                || tags.is_some_and(|tags| tags.iter().filter_map(Value::as_str).any(matches))
        };
        (self.include.is_empty() || self.include.iter().any(|p| names(p)))
            && !self.exclude.iter().any(|p| names(p))
    }
}

fn check_base_url(url: &str) -> Result<String, LoadError> {
    let invalid = |problem: &str| LoadError::InvalidBaseUrl {
        url: url.to_owned(),
        problem: problem.to_owned(),
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| invalid(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("not http or https"));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(invalid("a base URL has no query or fragment"));
    }
    Ok(url.to_owned())
}

/// A tag as an MCP tool name: letters, digits, `_`, `-` and `.` kept, anything else `_`.
fn tool_name(tag: &str) -> Result<String, LoadError> {
    let name: String = tag
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_-.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.len() > 128 || name == "help" {
        return Err(LoadError::InvalidToolName {
            tag: tag.to_owned(),
        });
    }
    Ok(name)
}

/// The tool's description: the tag's own, else one naming the tag and the API.
fn tag_description(document: &Value, tag: &str) -> String {
    let own = document
        .get("tags")
        .and_then(Value::as_array)
        .and_then(|tags| {
            tags.iter()
                .find(|t| t.get("name").and_then(Value::as_str) == Some(tag))
        })
        .and_then(|t| t.get("description"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|d| !d.is_empty());
    let title = document
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("the API");
    match own {
        Some(description) => format!("{description} ({title})"),
        None => format!("The {tag} operations of {title}"),
    }
}
