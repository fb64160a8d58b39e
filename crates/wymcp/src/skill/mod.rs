//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): Agent Skills served as
//! resources under `skill://`, enumerated by `skills/list`, described one by one by
//! `skills/get`, their folders listed by `resources/directory/read` (the stateless era,
//! 2026-07-28, where extensions are declared).
//!
//! Needs the `skills` feature (`wymcp = { version = "0.1", features = ["skills"] }`), off by
//! default: a `SKILL.md`'s frontmatter is YAML, read with `serde_norway`, built only for it.
//! Without it a server declares no skills extension and answers its methods as unknown.
//!
//! A [`Skill`] is a `SKILL.md` (YAML frontmatter with at least `name` and `description`)
//! and the files beside it, registered in code or read from a folder. Every file becomes a
//! resource at `skill://<prefix>/<name>/<path>`; the listing entry carries the frontmatter
//! verbatim and the SHA-256 digest and size of every file, so a host can verify what it reads.
//!
//! ```
//! use wymcp::Server;
//! use wymcp::skill::Skill;
//!
//! let review = Skill::new("---\nname: code-review\ndescription: Review a change\n---\n# Steps\n")
//!     .file("checklists/rust.md", "- unwrap on input paths");
//! let server = Server::builder().skill(review).build()?;
//! assert_eq!(
//!     server.resource_uris(),
//!     ["skill://code-review/SKILL.md", "skill://code-review/checklists/rust.md"]
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A folder of skills (each subfolder holding a `SKILL.md`) is read with
//! [`Skill::load_all`]; files are read once, when loaded, and served from memory.

mod error;
mod frontmatter;
mod load;
pub(crate) mod registry;

pub use error::SkillError;

pub use crate::protocol::extensions::SKILLS_EXTENSION;
/// The most files one skill serves, `SKILL.md` included (the extension's limit).
pub const MAX_SKILL_FILES: usize = 512;
/// The most bytes one skill's files add up to (the extension's limit, 16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// One skill: its `SKILL.md`, the files beside it, and where it sits in the server's
/// `skill://` namespace. Checked by [`ServerBuilder::build`](crate::ServerBuilder::build),
/// which refuses a skill whose frontmatter, name, paths or size break the rules.
///
/// ```
/// use wymcp::Server;
/// use wymcp::skill::Skill;
///
/// let refunds = Skill::new("---\nname: refunds\ndescription: Process refunds\n---\n")
///     .prefix("acme/billing");
/// let server = Server::builder().skill(refunds).build()?;
/// assert_eq!(server.resource_uris(), ["skill://acme/billing/refunds/SKILL.md"]);
///
/// let unnamed = Skill::new("---\ndescription: no name\n---\n");
/// let refused = Server::builder().skill(unnamed).build().unwrap_err();
/// assert!(refused.to_string().contains("needs a non-empty string \"name\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Skill {
    pub(crate) prefix: Option<String>,
    pub(crate) skill_md: String,
    /// The other files: a path relative to the skill's folder, and the raw bytes.
    pub(crate) files: Vec<(String, Vec<u8>)>,
}

impl Skill {
    /// A skill whose `SKILL.md` is `skill_md`; it is served at `skill://<name>/SKILL.md`,
    /// `<name>` being the frontmatter's.
    pub fn new(skill_md: impl Into<String>) -> Self {
        Skill {
            prefix: None,
            skill_md: skill_md.into(),
            files: Vec::new(),
        }
    }

    /// An organizational prefix: the skill is served at
    /// `skill://<prefix>/<name>/SKILL.md` (`prefix` a `/`-separated path).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// A file beside `SKILL.md`, at `path` relative to the skill's folder (`/`-separated).
    pub fn file(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.push((path.into(), contents.into()));
        self
    }
}
