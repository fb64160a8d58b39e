//! The guide stays navigable: every relative link in `README.md`, `CHANGELOG.md` and
//! `docs/*.md` points at a file that exists, and at a heading of it when it names an anchor;
//! and every page of `docs/` is compiled as doctests (listed in `guide_doctests` in
//! `docs/lib.rs`), so its Rust code cannot rot unnoticed.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The pages whose links are checked.
fn pages() -> Vec<PathBuf> {
    let root = root();
    let mut pages = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    pages.extend(guide_pages());
    pages
}

/// `docs/*.md`, sorted.
fn guide_pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.expect("docs/ is readable").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    pages.sort();
    pages
}

/// The lines of a page outside fenced code blocks.
fn prose_lines(text: &str) -> Vec<&str> {
    let mut fence: Option<&str> = None;
    let mut lines = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m && trimmed.trim_end() == m => fence = None,
            (None, None) => lines.push(line),
            _ => {}
        }
    }
    lines
}

/// A line with its inline code spans removed (a link inside backticks is not a link).
fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The link targets of a page: inline `[text](target)` and reference definitions
/// `[label]: target`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        let line = without_code_spans(line);
        if let Some(rest) = line.trim_start().strip_prefix('[')
            && let Some((_, target)) = rest.split_once("]:")
            && let Some(target) = target.split_whitespace().next()
        {
            targets.push(target.trim_matches(['<', '>']).to_owned());
            continue;
        }
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            let inside = after[..end].trim();
            // `(target "title")`: the target is the first word.
            let target = inside.split_whitespace().next().unwrap_or_default();
            targets.push(target.trim_matches(['<', '>']).to_owned());
            rest = &after[end..];
        }
    }
    targets
}

/// GitHub's anchor of a heading: lowercased, punctuation dropped, spaces as dashes.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings, duplicates numbered as GitHub numbers them.
fn anchors(text: &str) -> HashSet<String> {
    let mut anchors = HashSet::new();
    for line in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&line[hashes..]);
        let mut anchor = base.clone();
        let mut n = 0;
        while anchors.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        anchors.insert(anchor);
    }
    anchors
}

fn is_external(target: &str) -> bool {
    target.contains("://") || target.starts_with("mailto:")
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = fs::read_to_string(&page).expect("page is readable");
        let dir = page.parent().expect("a page has a directory");
        for target in link_targets(&text) {
            if target.is_empty() || is_external(&target) {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                dir.join(path)
            };
            let shown = page.strip_prefix(root()).unwrap_or(&page).display();
            if !file.exists() {
                broken.push(format!("{shown}: `{target}`: no such file"));
                continue;
            }
            let Some(anchor) = anchor else { continue };
            if file.extension().is_some_and(|ext| ext == "md") {
                let linked = fs::read_to_string(&file).expect("linked page is readable");
                if !anchors(&linked).contains(anchor) {
                    broken.push(format!("{shown}: `{target}`: no heading with that anchor"));
                }
            }
        }
    }
    assert!(checked > 0, "no relative link found: the scanner is broken");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// wymcp's crates are not on crates.io yet, so docs.rs has no page of theirs: a link there is
/// dead (link an item's source file, as the guide does, until the crates are published).
#[test]
fn no_link_points_at_docs_rs_of_a_crate_of_this_workspace() {
    let crates = ["wymcp", "wymcp-core", "wymcp-macros", "wymcp-redis"];
    let mut dead = Vec::new();
    for page in pages() {
        let text = fs::read_to_string(&page).expect("page is readable");
        for target in link_targets(&text) {
            let Some(rest) = target
                .strip_prefix("https://docs.rs/")
                .or_else(|| target.strip_prefix("http://docs.rs/"))
            else {
                continue;
            };
            let krate = rest.split('/').next().unwrap_or_default();
            if crates.contains(&krate) {
                let shown = page.strip_prefix(root()).unwrap_or(&page).display();
                dead.push(format!("{shown}: `{target}`"));
            }
        }
    }
    assert!(
        dead.is_empty(),
        "links to docs.rs pages that do not exist:\n{}",
        dead.join("\n")
    );
}

#[test]
fn every_guide_page_is_compiled_as_doctests() {
    let lib = fs::read_to_string(root().join("docs/lib.rs")).expect("docs/lib.rs");
    let missing: Vec<String> = guide_pages()
        .iter()
        .filter_map(|page| {
            let name = page.file_name()?.to_str()?;
            let include = format!("include_str!(\"{name}\")");
            (!lib.contains(&include)).then(|| name.to_owned())
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs pages not compiled as doctests (add them to `guide_doctests` in docs/lib.rs): {missing:?}"
    );
}

#[test]
fn the_scanner_reads_links_and_anchors_as_github_does() {
    let page = "# MCP 2026-07-28 (the stateless era)\n## `help`\n## Setup\n## Setup\n\
                See [a](x.md#setup-1), `[not](a link)`, [b](<y.md> \"title\").\n\
                ```md\n[in code](z.md)\n```\n[ref]: w.md\n";
    assert_eq!(link_targets(page), ["x.md#setup-1", "y.md", "w.md"]);
    let anchors = anchors(page);
    for anchor in [
        "mcp-2026-07-28-the-stateless-era",
        "help",
        "setup",
        "setup-1",
    ] {
        assert!(anchors.contains(anchor), "{anchor} in {anchors:?}");
    }
}
