//! An upstream's skills (the skills extension, SEP-2640) served as the gateway's own: when the
//! upstream declares `io.modelcontextprotocol/skills`, each skill it lists is read at start
//! (its `SKILL.md` and every file its entry names, each checked against the entry's `size`
//! and `digest`) and registered as a wymcp [`Skill`] at the same `skill://` URIs, so the
//! downstream client lists, gets and reads what the upstream serves, byte for byte, and
//! browses its folders (`resources/directory/read`).
//!
//! A skill is served whole or not at all: one whose entry is malformed, whose files break the
//! extension's limits or do not match the listing, or that wymcp would refuse, is left out
//! with a notice, and its files are not passed through as plain resources either.

use std::collections::BTreeSet;

use base64::Engine as _;
use serde_json::Value;
use sha2::{Digest, Sha256};
use wymcp::client::{Client, ClientError};
use wymcp::skill::{MAX_SKILL_BYTES, MAX_SKILL_FILES, SKILLS_EXTENSION, Skill};

/// Whether the upstream declares the skills extension (`capabilities.extensions`).
pub(crate) fn declared(client: &Client) -> bool {
    client.server_capabilities()["extensions"][SKILLS_EXTENSION].is_object()
}

/// One upstream skill, read and checked: what the gateway registers, and every URI it
/// serves (its `SKILL.md` first).
#[derive(Debug)]
pub(crate) struct UpstreamSkill {
    pub(crate) skill: Skill,
    pub(crate) uris: Vec<String>,
}

/// The skills an upstream lists: those read and checked, the URIs of every listed skill's
/// files (served as the skill's, never as plain resources), and why a skill was left out.
#[derive(Debug, Default)]
pub(crate) struct Skills {
    pub(crate) served: Vec<UpstreamSkill>,
    pub(crate) files: BTreeSet<String>,
    pub(crate) left_out: Vec<String>,
}

/// Lists the upstream's skills and reads each one's files. A failed `skills/list`, or a read
/// failed by the connection rather than answered (the transport, a timeout), is the
/// upstream's failure (it is not served, as when its tools cannot be listed); a read answered
/// with an error or over a limit, or anything else wrong with one skill, leaves that skill out.
pub(crate) async fn read(client: &Client) -> Result<Skills, ClientError> {
    let mut skills = Skills::default();
    for entry in client.list_skills().await? {
        let listed = listed_uris(&entry);
        skills.files.extend(listed.iter().cloned());
        let uri = entry
            .get("uri")
            .and_then(Value::as_str)
            .unwrap_or("(no uri)")
            .to_owned();
        match read_one(client, &entry).await {
            Ok(skill) => skills.served.push(skill),
            Err(Refused::Client(error)) if ends_connection(&error) => return Err(error),
            Err(Refused::Client(error)) => skills
                .left_out
                .push(format!("skill {uri}: left out: reading it failed: {error}")),
            Err(Refused::Skill(reason)) => skills
                .left_out
                .push(format!("skill {uri}: left out: {reason}")),
        }
    }
    Ok(skills)
}

/// Why one skill is not served.
enum Refused {
    Client(ClientError),
    Skill(String),
}

impl From<ClientError> for Refused {
    fn from(error: ClientError) -> Self {
        Refused::Client(error)
    }
}

/// A failure of the connection (the transport, a timeout) rather than an answer: neither a
/// JSON-RPC error nor a limit.
fn ends_connection(error: &ClientError) -> bool {
    error.rpc_error().is_none() && error.limit().is_none()
}

/// The URIs a listing entry names: its `uri` and each of its `resources`.
fn listed_uris(entry: &Value) -> Vec<String> {
    let mut uris: Vec<String> = entry
        .get("uri")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .into_iter()
        .collect();
    if let Some(resources) = entry.get("resources").and_then(Value::as_array) {
        uris.extend(
            resources
                .iter()
                .filter_map(|r| r.get("uri").and_then(Value::as_str).map(str::to_owned)),
        );
    }
    uris
}

/// Reads one listed skill and makes it a [`Skill`] wymcp serves at the same URIs.
async fn read_one(client: &Client, entry: &Value) -> Result<UpstreamSkill, Refused> {
    let refuse = |reason: String| Refused::Skill(reason);
    let uri = entry
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| refuse("its entry has no \"uri\"".into()))?;
    let path = uri
        .strip_prefix("skill://")
        .and_then(|rest| rest.strip_suffix("/SKILL.md"))
        .ok_or_else(|| refuse("its uri is no skill://<path>/SKILL.md".into()))?;
    let root = format!("skill://{path}/");
    let prefix = path.rsplit_once('/').map(|(prefix, _)| prefix.to_owned());
    let resources = entry
        .get("resources")
        .and_then(Value::as_array)
        .ok_or_else(|| refuse("its entry has no \"resources\"".into()))?;
    if resources.len() > MAX_SKILL_FILES {
        return Err(refuse(format!(
            "it lists {} files, more than the extension's {MAX_SKILL_FILES}",
            resources.len()
        )));
    }
    let listed_bytes: u64 = resources
        .iter()
        .filter_map(|r| r.get("size").and_then(Value::as_u64))
        .fold(0, u64::saturating_add);
    if listed_bytes > MAX_SKILL_BYTES {
        return Err(refuse(format!(
            "its files add up to {listed_bytes} bytes, more than the extension's {MAX_SKILL_BYTES}"
        )));
    }
    let mut skill_md = None;
    let mut files = Vec::new();
    let mut uris = vec![uri.to_owned()];
    for resource in resources {
        let file = resource
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| refuse("a file of its entry has no \"uri\"".into()))?;
        let relative = file
            .strip_prefix(&root)
            .ok_or_else(|| refuse(format!("its file {file} is outside {root}")))?;
        let bytes = read_file(client, file).await?;
        check(resource, file, &bytes).map_err(refuse)?;
        if relative == "SKILL.md" {
            let text = String::from_utf8(bytes)
                .map_err(|_| refuse("its SKILL.md is not UTF-8 text".into()))?;
            skill_md = Some(text);
        } else {
            uris.push(file.to_owned());
            files.push((relative.to_owned(), bytes));
        }
    }
    let skill_md = skill_md.ok_or_else(|| refuse("its entry does not list its SKILL.md".into()))?;
    let mut skill = Skill::new(skill_md);
    if let Some(prefix) = prefix {
        skill = skill.prefix(prefix);
    }
    for (path, bytes) in files {
        skill = skill.file(path, bytes);
    }
    // Served alone, it must build and land at the upstream's URIs (its frontmatter's name
    // is the URI's last segment), so the gateway's own build cannot fail on it.
    let alone = wymcp::Server::builder()
        .skill(skill.clone())
        .build()
        .map_err(|e| refuse(format!("wymcp refuses it: {e}")))?;
    if alone.resource_uris() != uris {
        return Err(refuse(format!(
            "served by wymcp it would sit at {}, not at the upstream's URIs",
            alone
                .resource_uris()
                .first()
                .map_or("(nothing)", String::as_str)
        )));
    }
    Ok(UpstreamSkill { skill, uris })
}

/// `resources/read` of one skill file: its raw bytes (a text's UTF-8, a blob decoded).
async fn read_file(client: &Client, uri: &str) -> Result<Vec<u8>, Refused> {
    let result = client.read_resource(uri).await?;
    let item = result
        .get("contents")
        .and_then(Value::as_array)
        .and_then(|items| {
            items
                .iter()
                .find(|i| i.get("uri").and_then(Value::as_str) == Some(uri))
        })
        .ok_or_else(|| Refused::Skill(format!("reading {uri} gave no contents for it")))?;
    match (item.get("text"), item.get("blob")) {
        (Some(Value::String(text)), _) => Ok(text.clone().into_bytes()),
        (_, Some(Value::String(blob))) => base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|_| Refused::Skill(format!("the blob of {uri} is not base64"))),
        _ => Err(Refused::Skill(format!(
            "{uri} read as neither text nor blob"
        ))),
    }
}

/// The bytes read against the listing's `size` and `digest` (`sha256:<hex>`).
fn check(listed: &Value, uri: &str, bytes: &[u8]) -> Result<(), String> {
    let size = listed.get("size").and_then(Value::as_u64);
    if size != Some(bytes.len() as u64) {
        return Err(format!(
            "{uri} read {} bytes, its entry lists {}",
            bytes.len(),
            size.map_or_else(|| "no size".to_owned(), |s| s.to_string())
        ));
    }
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let digest = format!("sha256:{hex}");
    if listed.get("digest").and_then(Value::as_str) != Some(digest.as_str()) {
        return Err(format!(
            "{uri} read with digest {digest}, not the one its entry lists"
        ));
    }
    Ok(())
}
