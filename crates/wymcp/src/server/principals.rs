//! The per-principal part of [`ServerBuilder`]: what a principal is shown of what it may not
//! call.

use super::ServerBuilder;
use crate::tool::visibility::Visibility;

impl ServerBuilder {
    /// What a caller is shown of the actions and tools whose scopes it lacks (default
    /// [`Visibility::Hide`]); applies to the tools given to this builder (tools added to a
    /// session at run time hide).
    pub fn visibility(mut self, visibility: Visibility) -> Self {
        self.visibility = visibility;
        self
    }
}
