//! A resource reader from a closure: no struct and `ReadResource` impl for each dynamic
//! resource or template.

use std::future::Future;

use crate::context::Context;
use crate::resource::{ReadResource, ResourceContents, ResourceError, Variables};

/// Reads a resource with a closure receiving the URI read, the template's variables (empty
/// for a plain resource) and the call's context. Made by [`read_fn`].
#[derive(Debug, Clone, Copy)]
pub struct ReadFn<F>(F);

/// A [`ReadResource`] from a closure, for [`Resource::dynamic`](crate::Resource::dynamic)
/// and [`ResourceTemplate::new`](crate::ResourceTemplate::new).
///
/// ```
/// use serde_json::json;
/// use wymcp::resource::{read_fn, ResourceError};
/// use wymcp::{Context, ResourceContents, ResourceTemplate, Server};
///
/// let note = ResourceTemplate::new(
///     "notes://{id}",
///     "note",
///     read_fn(|uri, vars, _ctx| async move {
///         match vars.get("id") {
///             Some("1") => Ok(vec![ResourceContents::text(uri, "Buy milk")]),
///             _ => Err(ResourceError::NotFound),
///         }
///     }),
/// );
/// let server = Server::builder().resource_template(note).build().unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let read = server
///     .handle_resources_read(Some(json!({"uri": "notes://1"})), Context::default())
///     .await
///     .unwrap();
/// assert_eq!(read["contents"][0]["text"], "Buy milk");
/// # });
/// ```
pub fn read_fn<F, Fut>(read: F) -> ReadFn<F>
where
    F: Fn(String, Variables, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send,
{
    ReadFn(read)
}

impl<F, Fut> ReadResource for ReadFn<F>
where
    F: Fn(String, Variables, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send,
{
    fn read(
        &self,
        uri: &str,
        vars: Variables,
        ctx: Context,
    ) -> impl Future<Output = Result<Vec<ResourceContents>, ResourceError>> + Send {
        (self.0)(uri.to_owned(), vars, ctx)
    }
}
