//! Why a document was refused at load.

use std::path::PathBuf;

/// Why [`OpenApiBuilder`](crate::OpenApiBuilder) refused a document. Each refusal of a limit
/// names the builder method that sets it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read the OpenAPI document {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// The document is larger than `max_document_bytes`.
    #[error("the OpenAPI document is larger than max_document_bytes ({limit} bytes)")]
    DocumentTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The document is neither JSON nor YAML.
    #[error("the OpenAPI document is not valid {format}: {message}")]
    Parse {
        /// `JSON` or `YAML`.
        format: &'static str,
        /// The parser's message.
        message: String,
    },
    /// The document is not OpenAPI 3.0 or 3.1 (Swagger 2.0 included).
    #[error("not an OpenAPI 3.0 or 3.1 document: {found}")]
    UnsupportedVersion {
        /// What the `openapi` field said, or that it is missing.
        found: String,
    },
    /// The document's shape is not OpenAPI's where it matters (`paths` not an object, ...).
    #[error("malformed OpenAPI document at {at}: {problem}")]
    Malformed {
        /// A JSON Pointer into the document.
        at: String,
        /// What is wrong there.
        problem: String,
    },
    /// A `$ref` names another document: nothing is fetched.
    #[error(
        "remote $ref refused at {at}: {reference} (only references inside the document, \"#/...\", are resolved; nothing is fetched)"
    )]
    RemoteRef {
        /// A JSON Pointer to the `$ref`.
        at: String,
        /// The reference as written.
        reference: String,
    },
    /// A local `$ref` points at nothing.
    #[error("unresolved $ref at {at}: {reference} names nothing in the document")]
    RefNotFound {
        /// A JSON Pointer to the `$ref`.
        at: String,
        /// The reference as written.
        reference: String,
    },
    /// References nest deeper than `max_ref_depth`.
    #[error("$ref chain deeper than max_ref_depth ({limit}) in operation {operation}")]
    RefTooDeep {
        /// The operation whose schema was being resolved.
        operation: String,
        /// The limit.
        limit: usize,
    },
    /// One operation's resolved schema is larger than `max_schema_bytes`.
    #[error(
        "the resolved schema of operation {operation} is larger than max_schema_bytes ({limit} bytes)"
    )]
    SchemaTooLarge {
        /// The operation.
        operation: String,
        /// The limit, in bytes.
        limit: usize,
    },
    /// The document declares more operations than `max_operations`.
    #[error("the OpenAPI document declares more than max_operations ({limit}) operations")]
    TooManyOperations {
        /// The limit.
        limit: usize,
    },
    /// No base URL: the document has no absolute server URL and none was given.
    #[error(
        "no base URL: the document's servers give no absolute http(s) URL ({found}); set one with OpenApiBuilder::base_url"
    )]
    NoBaseUrl {
        /// What the document offered.
        found: String,
    },
    /// The base URL given is not an absolute http(s) URL.
    #[error("invalid base URL {url:?}: {problem}")]
    InvalidBaseUrl {
        /// The URL.
        url: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A tool name (a tag, or the untagged tool's name) is not a valid MCP tool name.
    #[error(
        "tag {tag:?} makes no valid tool name (1 to 128 of A-Z a-z 0-9 _ - .; `help` is reserved)"
    )]
    InvalidToolName {
        /// The tag.
        tag: String,
    },
    /// The document could not be fetched from its URL (unreachable, timed out, a non-2xx
    /// answer).
    #[error("cannot fetch the OpenAPI document {url}: {problem}")]
    Fetch {
        /// The document's URL.
        url: String,
        /// What went wrong.
        problem: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {message}")]
    Client {
        /// What reqwest said (its error type is kept out of this crate's API).
        message: String,
    },
}
