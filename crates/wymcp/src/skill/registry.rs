//! [`SkillRegistry`]: the skills a server serves, checked and made into listing entries,
//! resources and a folder tree once, at `build()`; and the extension's three methods.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use wymcp_core::{ConfigurationError, Problem};

use super::frontmatter;
use super::{MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill, SkillError};
use crate::paging;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::resource::Resource;

/// The media type of a folder in `resources/directory/read`.
const DIRECTORY: &str = "inode/directory";

/// The served skills: entries in registration order, and every folder of the `skill://`
/// namespace with its direct children.
#[derive(Debug, Default)]
pub(crate) struct SkillRegistry {
    entries: Vec<Value>,
    by_uri: HashMap<String, usize>,
    folders: HashMap<String, Vec<Value>>,
}

/// One skill checked: its `SKILL.md` URI, its listing entry, and its files as resources.
struct Compiled {
    uri: String,
    entry: Value,
    resources: Vec<Resource>,
}

impl SkillRegistry {
    /// Checks every skill and builds the registry, with the resources that serve the files.
    pub(crate) fn build(
        skills: Vec<Skill>,
    ) -> Result<(SkillRegistry, Vec<Resource>), ConfigurationError> {
        let mut registry = SkillRegistry::default();
        let mut resources = Vec::new();
        // Folder URI -> child URI -> its `Resource` object (sorted, so listings are stable).
        let mut tree: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
        for skill in skills {
            let label = skill_label(&skill);
            let compiled = compile(skill).map_err(|e| refuse(&label, &e))?;
            if registry.by_uri.contains_key(&compiled.uri) {
                let e = SkillError::DuplicateSkill(compiled.uri.clone());
                return Err(refuse(&label, &e));
            }
            for resource in &compiled.resources {
                add_to_tree(&mut tree, resource);
            }
            registry
                .by_uri
                .insert(compiled.uri.clone(), registry.entries.len());
            registry.entries.push(compiled.entry);
            resources.extend(compiled.resources);
        }
        registry.folders = tree
            .into_iter()
            .map(|(folder, children)| (folder, children.into_values().collect()))
            .collect();
        Ok((registry, resources))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `skills/list`: one page of entries.
    pub(crate) fn list(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
    ) -> Result<Value, RpcError> {
        paging::listed(
            &self.entries,
            params,
            page_size,
            ("skills", "skills"),
            |e| e.clone(),
        )
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is `params.uri`; `-32602` when
    /// the server serves no such skill.
    pub(crate) fn get(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let uri = crate::resource::registry::uri_param(params)?;
        match self.by_uri.get(uri) {
            Some(&i) => Ok(json!({ "skill": self.entries[i] })),
            None => Err(RpcError::invalid_params_reason(format!(
                "Unknown skill {}: skills/get takes the uri of a SKILL.md that skills/list lists",
                wymcp_core::bound::echo(uri)
            ))),
        }
    }

    /// `resources/directory/read`: one page of the direct children of folder `params.uri`;
    /// `-32602` when it is no folder of the served skills.
    pub(crate) fn read_directory(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
    ) -> Result<Value, RpcError> {
        let uri = crate::resource::registry::uri_param(params)?;
        let Some(children) = self.folders.get(uri) else {
            return Err(RpcError::invalid_params_reason(format!(
                "Not a directory: {} is no folder of the served skills (a skill's folder is its SKILL.md's uri without /SKILL.md)",
                wymcp_core::bound::echo(uri)
            )));
        };
        let kind = ("resources/directory", "resources");
        paging::listed(children, params, page_size, kind, Value::clone)
    }
}

fn skill_label(skill: &Skill) -> String {
    let name = frontmatter::parse(&skill.skill_md)
        .ok()
        .and_then(|fm| fm.get("name").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "(unnamed)".into());
    match &skill.prefix {
        Some(prefix) => format!("{prefix}/{name}"),
        None => name,
    }
}

fn refuse(label: &str, error: &SkillError) -> ConfigurationError {
    ConfigurationError::new(Problem::InvalidSkill {
        skill: label.to_owned(),
        reason: error.to_string(),
    })
}

/// Checks one skill and makes its entry and resources.
fn compile(skill: Skill) -> Result<Compiled, SkillError> {
    let fm = frontmatter::parse(&skill.skill_md)?;
    let name = fm.get("name").and_then(Value::as_str).unwrap_or_default();
    if !frontmatter::valid_name(name) {
        return Err(SkillError::Name(name.to_owned()));
    }
    let root = match &skill.prefix {
        Some(prefix) if !valid_path(prefix) => return Err(SkillError::Prefix(prefix.clone())),
        Some(prefix) => format!("skill://{prefix}/{name}"),
        None => format!("skill://{name}"),
    };
    check_files(&skill)?;
    let uri = format!("{root}/SKILL.md");
    let description = fm.get("description").and_then(Value::as_str);
    let skill_md = Resource::text(&uri, name, skill.skill_md.clone())
        .description(description.unwrap_or_default())
        .mime_type("text/markdown");
    let mut manifest = vec![digest_of(&uri, skill.skill_md.as_bytes())];
    let mut resources = vec![skill_md];
    for (path, bytes) in skill.files {
        let file_uri = format!("{root}/{path}");
        manifest.push(digest_of(&file_uri, &bytes));
        resources.push(file_resource(file_uri, &path, bytes));
    }
    let entry = json!({"uri": uri, "frontmatter": fm, "resources": manifest});
    Ok(Compiled {
        uri,
        entry,
        resources,
    })
}

/// The paths, their uniqueness, and the extension's count and size limits.
fn check_files(skill: &Skill) -> Result<(), SkillError> {
    if skill.files.len() + 1 > MAX_SKILL_FILES {
        return Err(SkillError::TooManyFiles {
            limit: MAX_SKILL_FILES,
        });
    }
    let mut total = skill.skill_md.len() as u64;
    let mut seen = std::collections::HashSet::new();
    for (path, bytes) in &skill.files {
        if !valid_path(path) {
            return Err(SkillError::FilePath(path.clone()));
        }
        if path == "SKILL.md" || !seen.insert(path.as_str()) {
            return Err(SkillError::DuplicateFile(path.clone()));
        }
        total = total.saturating_add(bytes.len() as u64);
    }
    if total > MAX_SKILL_BYTES {
        return Err(SkillError::TooLarge {
            limit: MAX_SKILL_BYTES,
        });
    }
    Ok(())
}

/// A `/`-separated path of non-empty URI path segments of unreserved characters, none of
/// them `.` or `..`.
fn valid_path(path: &str) -> bool {
    path.split('/').all(|segment| {
        !segment.is_empty()
            && segment != "."
            && segment != ".."
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
    })
}

/// `{uri, digest, size}`: the SHA-256 of the raw bytes, as `sha256:<64 lowercase hex>`.
fn digest_of(uri: &str, bytes: &[u8]) -> Value {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    json!({"uri": uri, "digest": format!("sha256:{hex}"), "size": bytes.len()})
}

/// A supporting file as a resource: text when it is UTF-8, else a blob.
fn file_resource(uri: String, path: &str, bytes: Vec<u8>) -> Resource {
    let name = path.rsplit('/').next().unwrap_or(path).to_owned();
    let mime = mime_type(path);
    match String::from_utf8(bytes) {
        Ok(text) => Resource::text(uri, name, text).mime_type(mime.unwrap_or("text/plain")),
        Err(not_text) => Resource::blob(uri, name, not_text.into_bytes())
            .mime_type(mime.unwrap_or("application/octet-stream")),
    }
}

/// The media type of common skill files, by extension.
fn mime_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ => return None,
    })
}

/// Puts `resource` in its folder, and each folder above it in its parent, up to the
/// namespace's first segment.
fn add_to_tree(tree: &mut BTreeMap<String, BTreeMap<String, Value>>, resource: &Resource) {
    let uri = resource.uri();
    let Some((folder, _)) = uri.rsplit_once('/') else {
        return;
    };
    let listed = resource.to_value(ProtocolVersion::V2026_07_28);
    tree.entry(folder.to_owned())
        .or_default()
        .insert(uri.to_owned(), listed);
    let mut child = folder;
    while let Some((parent, name)) = child.rsplit_once('/') {
        if parent.len() <= "skill:/".len() {
            break; // `skill://`: the scheme, no folder
        }
        let listed = json!({"uri": child, "name": name, "mimeType": DIRECTORY});
        tree.entry(parent.to_owned())
            .or_default()
            .insert(child.to_owned(), listed);
        child = parent;
    }
}
