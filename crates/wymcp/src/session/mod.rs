//! Sessions: the data a session is ([`SessionRecord`], kept in a [`SessionStore`]), the live
//! session on the node that owns it ([`SessionHandle`]: runtime tools, the dirty tool list,
//! server→client requests), and the requests a tool sends to the client ([`Sampling`],
//! [`Elicitation`], [`ClientRequestError`]). Both transports serve messages through the same
//! engine.

mod calls;
pub(crate) mod engine;
mod handle;
mod request;
pub(crate) mod store;

pub(crate) use handle::RunningCall;
pub use handle::{SessionHandle, node_id};
pub use request::{
    ClientRequestError, DEFAULT_ELICITATION_TIMEOUT, DEFAULT_ROOTS_TIMEOUT,
    DEFAULT_SAMPLING_TIMEOUT, Elicitation, ListRoots, Sampling,
};
pub use store::{
    CreateError, InMemorySessionStore, SessionRecord, SessionStore, StoreError, new_session_id,
};
