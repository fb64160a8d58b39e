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
/// use wymcp::resource::{read_fn, ResourceError};
/// use wymcp::testing::TestClient;
/// use wymcp::resource::ResourceContents;
/// use wymcp::{ResourceTemplate, Server};
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
/// let read = TestClient::new(server).read_resource("notes://1").await.unwrap();
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

/// What a `#[wymcp::resources]` method may return: a text (one text item at the URI read),
/// the contents, or a `Result` of one of those and a [`ResourceError`].
///
/// ```
/// use wymcp::resource::IntoContents;
///
/// let contents = "Buy milk".to_owned().into_contents("notes://notes/1").unwrap();
/// assert_eq!(contents[0].uri(), "notes://notes/1");
/// assert_eq!(contents[0].as_text(), Some("Buy milk"));
/// ```
#[diagnostic::on_unimplemented(
    message = "a resource method cannot return `{Self}`",
    label = "return a `String` (the text at the URI read), `ResourceContents`, a `Vec<ResourceContents>`, or a `Result` of one of those and a `ResourceError`"
)]
pub trait IntoContents {
    /// The contents of `uri`.
    fn into_contents(self, uri: &str) -> Result<Vec<ResourceContents>, ResourceError>;
}

impl IntoContents for String {
    fn into_contents(self, uri: &str) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::text(uri, self)])
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self, _uri: &str) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self, _uri: &str) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self)
    }
}

impl<T: IntoContents> IntoContents for Result<T, ResourceError> {
    fn into_contents(self, uri: &str) -> Result<Vec<ResourceContents>, ResourceError> {
        self.and_then(|contents| contents.into_contents(uri))
    }
}

/// What the attribute's generated code calls; not public API.
pub(crate) mod support {
    use std::str::FromStr;

    use super::*;

    /// The template variable `name` parsed into `T` (a `String` as matched); one that does
    /// not parse is an invalid request naming it.
    pub fn resource_var<T: FromStr>(vars: &Variables, name: &str) -> Result<T, ResourceError>
    where
        T::Err: std::fmt::Display,
    {
        let text = vars.get(name).unwrap_or_default();
        text.parse::<T>().map_err(|error| {
            ResourceError::Invalid(format!(
                "variable {:?}: {error}",
                wymcp_core::bound::echo(name)
            ))
        })
    }

    /// The contents of a read, whatever [`IntoContents`] the method returned; contents
    /// without a MIME type get the one the attribute declared (`mime_type = "..."`), so a
    /// method answering a `String` serves the type the listing announces.
    pub fn resource_answer<R: IntoContents>(
        result: R,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let contents = result.into_contents(uri)?;
        let Some(mime_type) = mime_type else {
            return Ok(contents);
        };
        let typed = |c: ResourceContents| match c.mime_type() {
            Some(_) => c,
            None => c.with_mime_type(mime_type),
        };
        Ok(contents.into_iter().map(typed).collect())
    }
}
