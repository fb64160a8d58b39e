//! Sessions: the data a session is ([`SessionRecord`], kept in a [`SessionStore`]), the live
//! session on the node that owns it ([`SessionHandle`]: runtime tools, the dirty tool list,
//! server→client requests), and the requests a tool sends to the client ([`Sampling`],
//! [`Elicitation`], [`ClientRequestError`]). The serving core (`crate::serve`) serves the
//! messages of a session, for every transport.

pub(crate) mod bus;
mod calls;
pub(crate) mod events;
pub(crate) mod handle;
pub(crate) mod local_bus;
pub(crate) mod notifier;
mod relay;
mod request;
pub(crate) mod store;
mod tools;

pub(crate) use bus::node_of_request;
pub(crate) use bus::{Bus, BusMessage, CallLease, Notice, Recipient};
pub(crate) use calls::{RunningCall, RunningCalls, Work};
pub(crate) use events::{EventLog, InMemoryEventLog, LoggedEvent};
pub use handle::SessionHandle;
pub(crate) use handle::node_id;
pub use notifier::{Delivery, Notifier};
pub(crate) use relay::Relay;
pub use request::{
    ClientRequestError, DEFAULT_ELICITATION_TIMEOUT, DEFAULT_ROOTS_TIMEOUT,
    DEFAULT_SAMPLING_TIMEOUT, Elicitation, ListRoots, Sampling,
};
pub(crate) use store::{
    CreateError, InMemorySessionStore, SessionRecord, SessionStore, StoreError, StoreErrorKind,
    new_session_id,
};
pub(crate) use tools::ToolList;
