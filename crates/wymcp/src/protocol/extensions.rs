//! The identifiers of the extensions wymcp serves, as they appear under
//! `capabilities.extensions`: wire names, so the method table can tell which methods a
//! server's capabilities serve without importing the extensions themselves.

/// The skills extension's identifier, under `capabilities.extensions`. Public as
/// `wymcp::skill::SKILLS_EXTENSION`; without the `skills` feature the method table still reads it.
#[cfg_attr(not(feature = "skills"), allow(unreachable_pub))]
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The tasks extension's identifier, under `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
