//! What every annotated method takes first: `&self`.

use syn::{FnArg, Receiver, ReceiverKind};

/// Whether a method's first input is `&self` (not `self`, `&mut self`, `mut self` or a typed
/// `self: ...`).
pub(crate) fn is_shared_self(first: Option<&FnArg>) -> bool {
    matches!(first, Some(FnArg::Receiver(r)) if is_shared(r))
}

fn is_shared(receiver: &Receiver) -> bool {
    receiver.mutability.is_none() && matches!(receiver.kind, ReceiverKind::Reference(_, _, None))
}
