//! Reading skills from folders: a skill is a folder with a `SKILL.md`; its files are read
//! once, bounded by the extension's limits, and symbolic links are not followed.

use std::fs;
use std::path::{Path, PathBuf};

use super::{MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill, SkillError};

/// The deepest folder nesting read inside one skill.
const MAX_DEPTH: usize = 16;

impl Skill {
    /// The skill in folder `dir`: its `SKILL.md` and every file below it (symbolic links
    /// left out), read now. Refuses a folder without `SKILL.md`, more than
    /// [`MAX_SKILL_FILES`] files, more than [`MAX_SKILL_BYTES`] bytes, or nesting deeper than
    /// 16 folders.
    ///
    /// ```no_run
    /// use wymcp::skill::Skill;
    ///
    /// let skill = Skill::from_dir("skills/code-review")?;
    /// let server = wymcp::Server::builder().skill(skill).build()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Skill, SkillError> {
        let dir = dir.as_ref();
        let skill_md_path = dir.join("SKILL.md");
        if !skill_md_path.is_file() {
            return Err(SkillError::MissingSkillMd(dir.to_path_buf()));
        }
        let mut files = Vec::new();
        let mut budget = Budget::default();
        walk(dir, "", 0, &mut files, &mut budget)?;
        let position = files
            .iter()
            .position(|(path, _)| path == "SKILL.md")
            .ok_or_else(|| SkillError::MissingSkillMd(dir.to_path_buf()))?;
        let (_, bytes) = files.remove(position);
        let skill_md = String::from_utf8(bytes).map_err(|_| {
            SkillError::Frontmatter(format!("{} is not UTF-8", skill_md_path.display()))
        })?;
        files.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(Skill {
            prefix: None,
            skill_md,
            files,
        })
    }

    /// Every skill in folder `root`: each subfolder holding a `SKILL.md`, in name order
    /// (subfolders without one are skipped).
    ///
    /// ```no_run
    /// use wymcp::Server;
    /// use wymcp::skill::Skill;
    ///
    /// let server = Server::builder().skills(Skill::load_all("skills")?).build()?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_all(root: impl AsRef<Path>) -> Result<Vec<Skill>, SkillError> {
        let root = root.as_ref();
        let mut dirs: Vec<PathBuf> = read_dir(root)?
            .into_iter()
            .filter(|(_, kind)| kind.is_dir())
            .map(|(path, _)| path)
            .filter(|path| path.join("SKILL.md").is_file())
            .collect();
        dirs.sort();
        dirs.iter().map(Skill::from_dir).collect()
    }
}

/// What the files read so far cost.
#[derive(Default)]
struct Budget {
    files: usize,
    bytes: u64,
}

fn walk(
    dir: &Path,
    relative: &str,
    depth: usize,
    files: &mut Vec<(String, Vec<u8>)>,
    budget: &mut Budget,
) -> Result<(), SkillError> {
    if depth > MAX_DEPTH {
        return Err(SkillError::TooDeep {
            path: dir.to_path_buf(),
            limit: MAX_DEPTH,
        });
    }
    for (path, kind) in read_dir(dir)? {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let child = if relative.is_empty() {
            name.into_owned()
        } else {
            format!("{relative}/{name}")
        };
        if kind.is_dir() {
            walk(&path, &child, depth + 1, files, budget)?;
        } else if kind.is_file() {
            budget.files += 1;
            if budget.files > MAX_SKILL_FILES {
                return Err(SkillError::TooManyFiles {
                    limit: MAX_SKILL_FILES,
                });
            }
            let length = fs::metadata(&path).map_err(|e| io(&path, e))?.len();
            budget.bytes = budget.bytes.saturating_add(length);
            if budget.bytes > MAX_SKILL_BYTES {
                return Err(SkillError::TooLarge {
                    limit: MAX_SKILL_BYTES,
                });
            }
            files.push((child, fs::read(&path).map_err(|e| io(&path, e))?));
        }
        // Symbolic links (and anything else) are not served: a link could lead outside
        // the skill's folder.
    }
    Ok(())
}

fn read_dir(dir: &Path) -> Result<Vec<(PathBuf, fs::FileType)>, SkillError> {
    let entries = fs::read_dir(dir).map_err(|e| io(dir, e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io(dir, e))?;
        let kind = entry.file_type().map_err(|e| io(&entry.path(), e))?;
        out.push((entry.path(), kind));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn io(path: &Path, source: std::io::Error) -> SkillError {
    SkillError::Io {
        path: path.to_path_buf(),
        source,
    }
}
