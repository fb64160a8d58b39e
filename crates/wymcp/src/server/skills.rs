//! The skills extension as the server serves it: `skills/list`, `skills/get` and
//! `resources/directory/read` over the server's skills (their files are its resources),
//! registered in its [`Extensions`](super::extension::Extensions) when it serves a skill.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::Server;
use super::extension::Extension;
use crate::context::Context;
use crate::paging::params_object;
use crate::protocol::{Method, RpcError};
use crate::skill::SKILLS_EXTENSION;

/// The skills extension (`io.modelcontextprotocol/skills`), registered when the server
/// serves a skill.
#[derive(Debug)]
pub(crate) struct SkillsExtension;

impl Extension for SkillsExtension {
    fn id(&self) -> &'static str {
        SKILLS_EXTENSION
    }

    fn declaration(&self) -> Value {
        json!({ "directoryRead": true })
    }

    fn methods(&self) -> &'static [Method] {
        &[
            Method::SkillsList,
            Method::SkillsGet,
            Method::ResourcesDirectoryRead,
        ]
    }

    /// The server's layers wrap the skills methods as they wrap the resources'.
    fn layered(&self) -> bool {
        true
    }

    fn serve<'a>(
        &'a self,
        server: &'a Server,
        method: Method,
        params: Option<Value>,
        _ctx: Context,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let features = server.features();
            let (skills, size) = (&features.skills, features.page_size);
            let params = params_object(params)?;
            match method {
                Method::SkillsList => skills.list(&params, size),
                Method::SkillsGet => skills.get(&params),
                Method::ResourcesDirectoryRead => skills.read_directory(&params, size),
                _ => Err(RpcError::method_not_found()),
            }
        })
    }
}
