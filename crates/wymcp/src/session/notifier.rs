//! [`Notifier`]: where a call's request-related messages go (the transport decides), and
//! [`Delivery`]: what became of one.

use std::sync::Arc;

use serde_json::Value;

/// What became of a message handed to a [`Notifier`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Written to the stream.
    Sent,
    /// No stream is open to carry it.
    NoStream,
    /// The stream is gone.
    Disconnected,
}

/// Where a call's request-related messages (progress, log messages, server requests) go; the
/// transport sets it. Receives whole JSON-RPC messages.
#[derive(Clone)]
pub struct Notifier {
    send: Arc<dyn Fn(Value) -> Delivery + Send + Sync>,
    stream: Arc<str>,
}

impl Notifier {
    /// A notifier calling `send` with each message (always [`Delivery::Sent`]).
    pub fn new(send: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Notifier::with_delivery("related", move |message| {
            send(message);
            Delivery::Sent
        })
    }

    /// A notifier for the stream named `stream` (it appears in server request ids), whose
    /// `send` says what became of each message.
    pub fn with_delivery(
        stream: impl Into<String>,
        send: impl Fn(Value) -> Delivery + Send + Sync + 'static,
    ) -> Self {
        Notifier::for_stream(Arc::from(stream.into()), send)
    }

    /// [`with_delivery`](Self::with_delivery) with the name already shared (no copy).
    pub(crate) fn for_stream(
        stream: Arc<str>,
        send: impl Fn(Value) -> Delivery + Send + Sync + 'static,
    ) -> Self {
        Notifier {
            send: Arc::new(send),
            stream,
        }
    }

    /// Hands a message to the stream.
    pub fn deliver(&self, message: Value) -> Delivery {
        (self.send)(message)
    }

    /// The name of the stream.
    pub fn stream(&self) -> &str {
        &self.stream
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notifier")
    }
}
