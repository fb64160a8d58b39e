//! [`ReadResource`]: the async callback that produces a resource's contents.

use std::future::Future;
use std::sync::Arc;

use serde_json::json;

use crate::context::Context;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::resource::{ResourceContents, Variables};
use futures_util::future::BoxFuture;

/// Why a read failed.
///
/// ```
/// use wymcp::ProtocolVersion;
/// use wymcp::resource::ResourceError;
///
/// let err = ResourceError::NotFound.to_rpc_error("test://gone", ProtocolVersion::V2025_11_25);
/// assert_eq!(err.code(), -32002);
/// assert_eq!(err.data().unwrap()["uri"], "test://gone");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// No such resource (a template matched the URI, but nothing is there).
    #[error("resource not found")]
    NotFound,
    /// The URI or its variables are unacceptable; the reason is sent to the client.
    #[error("invalid resource request: {0}")]
    Invalid(String),
    /// The read failed; the reason is sent to the client as an internal error.
    #[error("reading the resource failed: {0}")]
    Failed(String),
}

impl ResourceError {
    /// The JSON-RPC error a session of `version` receives for a read of `uri` that failed so.
    ///
    /// Not found is `-32002` with `data.uri` up to 2025-11-25, and `-32602` with `data.uri` from
    /// 2026-07-28 on (SEP-2164).
    pub fn to_rpc_error(&self, uri: &str, version: ProtocolVersion) -> RpcError {
        let uri = wymcp_core::bound::echo(uri);
        match self {
            ResourceError::NotFound => not_found(&uri, version),
            ResourceError::Invalid(reason) => RpcError::new(
                RpcError::INVALID_PARAMS,
                format!("Invalid resource request for {uri}: {reason}"),
                Some(json!({ "uri": uri })),
            ),
            ResourceError::Failed(reason) => RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("Reading resource {uri} failed: {reason}"),
                Some(json!({ "uri": uri })),
            ),
        }
    }
}

/// The MCP "resource not found" error code of 2025-03-26 to 2025-11-25.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

pub(crate) fn not_found(uri: &str, version: ProtocolVersion) -> RpcError {
    refuse_not_found(uri, format!("Resource not found: {uri}"), version)
}

/// [`not_found`], saying why (`uri` is quoted as given: bound it first).
pub(crate) fn not_found_because(uri: &str, reason: &str, version: ProtocolVersion) -> RpcError {
    refuse_not_found(uri, format!("Resource not found: {uri}: {reason}"), version)
}

fn refuse_not_found(uri: &str, message: String, version: ProtocolVersion) -> RpcError {
    let code = if version.is_stateless() {
        RpcError::INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND
    };
    RpcError::new(code, message, Some(json!({ "uri": uri })))
}

/// Reads a resource: the callback of a [`ResourceTemplate`](crate::resource::ResourceTemplate)
/// or a dynamic [`Resource`](crate::resource::Resource).
///
/// `uri` is the URI the client asked for; `vars` are the template variables it matched with
/// (empty for a resource).
///
/// ```
/// use wymcp::Context;
/// use wymcp::resource::{ReadResource, ResourceContents, ResourceError, Variables};
///
/// struct Users;
///
/// impl ReadResource for Users {
///     async fn read(&self, uri: &str, vars: Variables, _ctx: Context)
///         -> Result<Vec<ResourceContents>, ResourceError>
///     {
///         match vars.get("id") {
///             Some("1") => Ok(vec![ResourceContents::text(uri, "Ada").with_mime_type("text/plain")]),
///             _ => Err(ResourceError::NotFound),
///         }
///     }
/// }
/// ```
pub trait ReadResource: Send + Sync + 'static {
    /// The contents of `uri`.
    fn read(
        &self,
        uri: &str,
        vars: Variables,
        ctx: Context,
    ) -> impl Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send;

    /// A client subscribed to `uri` (`resources/subscribe`, after the server recorded it):
    /// a reader whose contents live elsewhere subscribes there (the gateway forwards it to
    /// the upstream). An error refuses the subscribe and drops what was recorded. Default:
    /// nothing to do.
    fn subscribed(
        &self,
        uri: &str,
        ctx: Context,
    ) -> impl Future<Output = Result<(), ResourceError>> + Send {
        let _ = (uri, ctx);
        async { Ok(()) }
    }

    /// A client unsubscribed from `uri` (`resources/unsubscribe`). Default: nothing to do.
    fn unsubscribed(&self, uri: &str, ctx: Context) -> impl Future<Output = ()> + Send {
        let _ = (uri, ctx);
        async {}
    }
}

/// The object-safe form of [`ReadResource`].
pub(crate) trait DynRead: Send + Sync {
    fn read<'a>(
        &'a self,
        uri: &'a str,
        vars: Variables,
        ctx: Context,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, ResourceError>>;

    fn subscribed<'a>(
        &'a self,
        uri: &'a str,
        ctx: Context,
    ) -> BoxFuture<'a, Result<(), ResourceError>>;

    fn unsubscribed<'a>(&'a self, uri: &'a str, ctx: Context) -> BoxFuture<'a, ()>;
}

impl<T: ReadResource> DynRead for T {
    fn read<'a>(
        &'a self,
        uri: &'a str,
        vars: Variables,
        ctx: Context,
    ) -> BoxFuture<'a, Result<Vec<ResourceContents>, ResourceError>> {
        Box::pin(ReadResource::read(self, uri, vars, ctx))
    }

    fn subscribed<'a>(
        &'a self,
        uri: &'a str,
        ctx: Context,
    ) -> BoxFuture<'a, Result<(), ResourceError>> {
        Box::pin(ReadResource::subscribed(self, uri, ctx))
    }

    fn unsubscribed<'a>(&'a self, uri: &'a str, ctx: Context) -> BoxFuture<'a, ()> {
        Box::pin(ReadResource::unsubscribed(self, uri, ctx))
    }
}

pub(crate) type Reader = Arc<dyn DynRead>;
