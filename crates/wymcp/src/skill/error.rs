//! [`SkillError`]: why a skill cannot be served, named with the limit or rule it breaks.

use std::path::PathBuf;

/// Why a skill was refused, by [`Skill::from_dir`](super::Skill::from_dir) or by
/// [`ServerBuilder::build`](crate::ServerBuilder::build).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkillError {
    /// A file or folder could not be read.
    #[error("skill {path}: {source}")]
    Io {
        /// What was being read.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The folder has no `SKILL.md` at its root.
    #[error("skill folder {0} has no SKILL.md at its root")]
    MissingSkillMd(PathBuf),
    /// `SKILL.md` does not begin with a `---` delimited YAML frontmatter block.
    #[error("SKILL.md does not begin with YAML frontmatter between two '---' lines")]
    NoFrontmatter,
    /// The frontmatter is not valid YAML, or not a mapping with string keys.
    #[error("SKILL.md frontmatter is not a YAML mapping: {0}")]
    Frontmatter(String),
    /// A field the Agent Skills specification requires is absent, empty or not a string.
    #[error("SKILL.md frontmatter needs a non-empty string {0:?}")]
    MissingField(&'static str),
    /// The skill name breaks the Agent Skills naming rules.
    #[error(
        "skill name {0:?} breaks the naming rules: 1 to 64 characters of lowercase letters, digits and '-', no leading, trailing or doubled '-'"
    )]
    Name(String),
    /// The organizational prefix is not a `/`-separated path of URI path segments.
    #[error(
        "skill prefix {0:?} is not a '/'-separated path of non-empty segments of [A-Za-z0-9._~-]"
    )]
    Prefix(String),
    /// A file path is not relative, names `.`/`..`, or has characters outside URI paths.
    #[error(
        "skill file path {0:?} is not a relative '/'-separated path of segments of [A-Za-z0-9._~-] (no '.' or '..')"
    )]
    FilePath(String),
    /// Two files of one skill share a path.
    #[error("skill file {0:?} is given twice")]
    DuplicateFile(String),
    /// More files than a skill may serve.
    #[error("skill has more than {limit} files, the most a skill serves (SKILL.md included)")]
    TooManyFiles {
        /// The limit (512).
        limit: usize,
    },
    /// The files add up to more bytes than a skill may serve.
    #[error("skill files add up to more than {limit} bytes, the most a skill serves")]
    TooLarge {
        /// The limit (16 MiB).
        limit: u64,
    },
    /// Folders nested deeper than a skill may be read.
    #[error("skill folder {path} is nested deeper than {limit} levels")]
    TooDeep {
        /// The folder.
        path: PathBuf,
        /// The limit.
        limit: usize,
    },
    /// Two skills share a URI.
    #[error("two skills are served at {0}")]
    DuplicateSkill(String),
}
