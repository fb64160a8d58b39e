//! The skills extension (SEP-2640) over real HTTP at 2026-07-28: a skill read from a folder
//! and one registered in code, served by a server on 127.0.0.1; the capability in
//! `server/discover`, `skills/list` entries (verbatim frontmatter, digests and sizes checked
//! against the bytes), `skills/get`, `resources/read` of the files, `resources/directory/read`
//! of the folders, and the refusals.

#![allow(clippy::unwrap_used)]

mod http_harness;

use std::path::PathBuf;

use http_harness::{Answer, Http, borrowed, modern_headers, request};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wymcp::Server;
use wymcp::skill::{Skill, SkillError};
use wymcp::transport::http::StreamableHttp;

const REVIEW_MD: &str = "---\nname: code-review\ndescription: Review a change\nmetadata:\n  version: \"2\"\n---\n# Steps\n";

/// A fresh folder under the target directory, removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str) -> Folder {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("skills-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Folder(dir)
    }

    fn write(&self, path: &str, contents: &[u8]) {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

async fn call(http: &Http, method: &str, params: Value) -> Answer {
    let body = request(json!(1), method, params);
    let headers = modern_headers(&body);
    http.post_raw(&borrowed(&headers), body.to_string()).await
}

async fn serve(folder: &Folder) -> Http {
    folder.write("code-review/SKILL.md", REVIEW_MD.as_bytes());
    folder.write("code-review/references/checklist.md", b"- tests\n");
    folder.write("code-review/scripts/logo.bin", &[0xff, 0x00, 0xfe]);
    folder.write("not-a-skill/notes.md", b"no SKILL.md here");
    let refunds = Skill::new("---\nname: refunds\ndescription: Process refunds\n---\n")
        .prefix("acme/billing")
        .file("templates/email.md", "Dear customer");
    let server = Server::builder()
        .skills(Skill::load_all(&folder.0).unwrap())
        .skill(refunds)
        .page_size(1)
        .build()
        .unwrap();
    Http::serve(StreamableHttp::builder(server)).await
}

#[tokio::test]
async fn skills_are_listed_with_verbatim_frontmatter_digests_and_sizes() {
    let folder = Folder::new("list");
    let http = serve(&folder).await;

    let discover = call(&http, "server/discover", json!({})).await.json();
    assert_eq!(
        discover["result"]["capabilities"]["extensions"],
        json!({"io.modelcontextprotocol/skills": {"directoryRead": true}})
    );

    // One skill per page (page_size 1): the first, then the second through nextCursor.
    let first = call(&http, "skills/list", json!({})).await.json()["result"].clone();
    assert_eq!(first["ttlMs"], 0);
    assert_eq!(first["cacheScope"], "private");
    assert_eq!(
        first["skills"],
        json!([{
            "uri": "skill://code-review/SKILL.md",
            "frontmatter": {"name": "code-review", "description": "Review a change",
                            "metadata": {"version": "2"}},
            "resources": [
                {"uri": "skill://code-review/SKILL.md", "digest": digest(REVIEW_MD.as_bytes()),
                 "size": REVIEW_MD.len()},
                {"uri": "skill://code-review/references/checklist.md",
                 "digest": digest(b"- tests\n"), "size": 8},
                {"uri": "skill://code-review/scripts/logo.bin",
                 "digest": digest(&[0xff, 0x00, 0xfe]), "size": 3}
            ]
        }])
    );
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = call(&http, "skills/list", json!({"cursor": cursor}))
        .await
        .json();
    let entry = &second["result"]["skills"][0];
    assert_eq!(entry["uri"], "skill://acme/billing/refunds/SKILL.md");
    assert!(second["result"].get("nextCursor").is_none());

    let got = call(&http, "skills/get", json!({"uri": entry["uri"]}))
        .await
        .json();
    assert_eq!(&got["result"]["skill"], entry);
    assert!(got["result"].get("nextCursor").is_none());
    assert_eq!(got["result"]["cacheScope"], "private");
}

#[tokio::test]
async fn the_files_are_resources_and_the_folders_are_directories() {
    let folder = Folder::new("read");
    let http = serve(&folder).await;

    let read = |uri: &str| call(&http, "resources/read", json!({ "uri": uri }));
    let skill_md = read("skill://code-review/SKILL.md").await.json();
    let contents = &skill_md["result"]["contents"][0];
    assert_eq!(contents["text"], REVIEW_MD);
    assert_eq!(contents["mimeType"], "text/markdown");
    let binary = read("skill://code-review/scripts/logo.bin").await.json();
    assert_eq!(binary["result"]["contents"][0]["blob"], "/wD+");

    let listed = call(&http, "resources/list", json!({})).await.json();
    assert_eq!(
        listed["result"]["resources"][0],
        json!({"uri": "skill://code-review/SKILL.md", "name": "code-review",
               "description": "Review a change", "mimeType": "text/markdown",
               "size": REVIEW_MD.len()})
    );

    let dir = |uri: &str| call(&http, "resources/directory/read", json!({ "uri": uri }));
    let root = dir("skill://code-review").await.json();
    let children: Vec<(&str, &str)> = root["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["uri"].as_str().unwrap(), c["mimeType"].as_str().unwrap()))
        .collect();
    // page_size 1 pages folders too: the first child, then the rest through nextCursor.
    assert_eq!(
        children,
        [("skill://code-review/SKILL.md", "text/markdown")]
    );
    let mut all = children
        .iter()
        .map(|(u, _)| u.to_string())
        .collect::<Vec<_>>();
    let mut cursor = root["result"]["nextCursor"].as_str().map(str::to_owned);
    for _ in 0..10 {
        let Some(next) = cursor.take() else { break };
        let page = call(
            &http,
            "resources/directory/read",
            json!({"uri": "skill://code-review", "cursor": next}),
        )
        .await
        .json();
        for child in page["result"]["resources"].as_array().unwrap() {
            all.push(format!(
                "{} {}",
                child["uri"].as_str().unwrap(),
                child["mimeType"].as_str().unwrap()
            ));
        }
        cursor = page["result"]["nextCursor"].as_str().map(str::to_owned);
    }
    assert_eq!(
        all,
        [
            "skill://code-review/SKILL.md",
            "skill://code-review/references inode/directory",
            "skill://code-review/scripts inode/directory",
        ]
    );
    let prefix = dir("skill://acme").await.json();
    assert_eq!(
        prefix["result"]["resources"],
        json!([{"uri": "skill://acme/billing", "name": "billing", "mimeType": "inode/directory"}])
    );
}

#[tokio::test]
async fn unknown_skills_and_non_directories_are_invalid_params() {
    let folder = Folder::new("refuse");
    let http = serve(&folder).await;

    let unknown = call(&http, "skills/get", json!({"uri": "skill://nope/SKILL.md"})).await;
    let error = &unknown.json()["error"];
    assert_eq!(error["code"], -32602);
    assert_eq!(error["message"], "Invalid params");
    assert_eq!(
        error["data"]["reason"],
        "Unknown skill skill://nope/SKILL.md: skills/get takes the uri of a SKILL.md that skills/list lists"
    );

    let file = call(
        &http,
        "resources/directory/read",
        json!({"uri": "skill://code-review/SKILL.md"}),
    )
    .await;
    assert_eq!(file.json()["error"]["code"], -32602);
    let missing = call(&http, "skills/get", json!({})).await;
    assert_eq!(missing.json()["error"]["code"], -32602);
}

#[tokio::test]
async fn a_server_without_skills_declares_no_extension_and_serves_no_skill_method() {
    let http = Http::serve(StreamableHttp::builder(Server::builder().build().unwrap())).await;
    let discover = call(&http, "server/discover", json!({})).await.json();
    assert!(
        discover["result"]["capabilities"]
            .get("extensions")
            .is_none()
    );
    let list = call(&http, "skills/list", json!({})).await;
    assert_eq!(list.status, reqwest::StatusCode::NOT_FOUND);
    assert_eq!(list.json()["error"]["code"], -32601);
}

#[test]
fn build_refuses_skills_that_break_the_rules() {
    let refused = |skill: Skill| {
        Server::builder()
            .skill(skill)
            .build()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(Skill::new("---\nname: Bad_Name\ndescription: d\n---\n")),
        "skill \"Bad_Name\": skill name \"Bad_Name\" breaks the naming rules: 1 to 64 characters of lowercase letters, digits and '-', no leading, trailing or doubled '-'"
    );
    assert_eq!(
        refused(Skill::new(REVIEW_MD).file("../escape.md", "x")),
        "skill \"code-review\": skill file path \"../escape.md\" is not a relative '/'-separated path of segments of [A-Za-z0-9._~-] (no '.' or '..')"
    );
    assert_eq!(
        refused(Skill::new(REVIEW_MD).file("SKILL.md", "again")),
        "skill \"code-review\": skill file \"SKILL.md\" is given twice"
    );
    let mut many = Skill::new(REVIEW_MD);
    for i in 0..512 {
        many = many.file(format!("f{i}.md"), "x");
    }
    assert_eq!(
        refused(many),
        "skill \"code-review\": skill has more than 512 files, the most a skill serves (SKILL.md included)"
    );
    let big = Skill::new(REVIEW_MD).file("big.bin", vec![0u8; 16 * 1024 * 1024]);
    assert_eq!(
        refused(big),
        "skill \"code-review\": skill files add up to more than 16777216 bytes, the most a skill serves"
    );
    let twice = Server::builder()
        .skill(Skill::new(REVIEW_MD))
        .skill(Skill::new(REVIEW_MD))
        .build()
        .unwrap_err();
    assert_eq!(
        twice.to_string(),
        "skill \"code-review\": two skills are served at skill://code-review/SKILL.md"
    );
}

#[test]
fn a_folder_without_skill_md_is_refused_by_name() {
    let folder = Folder::new("missing");
    folder.write("notes.md", b"x");
    match Skill::from_dir(&folder.0) {
        Err(SkillError::MissingSkillMd(path)) => assert_eq!(path, folder.0),
        other => panic!("expected MissingSkillMd, got {other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn symbolic_links_in_a_skill_folder_are_not_followed() {
    let folder = Folder::new("links");
    folder.write("s/SKILL.md", REVIEW_MD.as_bytes());
    folder.write("secret.txt", b"outside the skill");
    std::os::unix::fs::symlink(folder.0.join("secret.txt"), folder.0.join("s/leak.txt")).unwrap();
    let server = Server::builder()
        .skill(Skill::from_dir(folder.0.join("s")).unwrap())
        .build()
        .unwrap();
    assert_eq!(server.resource_uris(), ["skill://code-review/SKILL.md"]);
}
