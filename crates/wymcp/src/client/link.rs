//! [`Link`]: the transport a client speaks over, Streamable HTTP or a spawned process's
//! stdio, behind one way of sending a message.

use reqwest::header::HeaderMap;

use super::ClientError;
use super::builder::Settings;
use super::http::{Answer, Connection};
use super::notifications::Queue;
use super::outgoing::Outgoing;
use super::stdio::Process;

/// The transport of a connected client.
#[derive(Debug)]
pub(crate) enum Link {
    Http(Connection),
    Stdio(Process),
}

impl Link {
    pub(crate) fn settings(&self) -> &Settings {
        match self {
            Link::Http(conn) => &conn.settings,
            Link::Stdio(process) => &process.settings,
        }
    }

    pub(crate) fn notes(&self) -> &Queue {
        match self {
            Link::Http(conn) => &conn.notes,
            Link::Stdio(process) => &process.notes,
        }
    }

    /// Sends `body` (a request with `id`, or a notification) under the timeout: its answer.
    /// `headers` are the era's HTTP headers (not used over stdio).
    pub(crate) async fn send(
        &self,
        method: &str,
        id: Option<i64>,
        body: &Outgoing,
        headers: HeaderMap,
    ) -> Result<Answer, ClientError> {
        match self {
            Link::Http(conn) => conn.post(method, id, body, headers).await,
            Link::Stdio(process) => Ok(Answer {
                headers: HeaderMap::new(),
                result: process.send(method, id, body).await?,
            }),
        }
    }
}
