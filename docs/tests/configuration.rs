//! `docs/configuration.md` lists every public method of every builder: each `pub fn` of
//! `impl ServerBuilder`, `impl Limits`, `impl StreamableHttp`, `impl BearerAuth`,
//! `impl StdioConfig`, `impl Cli`, `impl Invocation`, `impl JwtAuthBuilder`,
//! `impl IntrospectionAuthBuilder` and `impl ClientBuilder` (found wherever they are in
//! `crates/wymcp/src`) appears as `` `.name( `` in the page's section for it. A method added
//! without its line fails here.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names of the `pub fn`s (not `pub(crate)`) inside `impl <ty> {` blocks of `text`.
fn public_methods(text: &str, ty: &str) -> Vec<String> {
    let opening = format!("impl {ty} {{");
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(&opening) {
        let body = &rest[at + opening.len()..];
        let mut depth = 1usize;
        let mut end = body.len();
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        for line in body[..end].lines() {
            let line = line.trim_start();
            let Some(sig) = line
                .strip_prefix("pub fn ")
                .or_else(|| line.strip_prefix("pub async fn "))
            else {
                continue;
            };
            let name: String = sig
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            names.push(name);
        }
        rest = &body[end..];
    }
    names
}

/// The text of the page's section whose `## ` heading starts with `heading`.
fn section<'a>(page: &'a str, heading: &str) -> &'a str {
    let start = page
        .find(&format!("\n## {heading}"))
        .unwrap_or_else(|| panic!("configuration.md has no section `## {heading}`"));
    let body = &page[start + 1..];
    let end = body[3..].find("\n## ").map_or(body.len(), |i| i + 3);
    &body[..end]
}

#[test]
fn configuration_md_lists_every_public_builder_method() {
    let mut files = Vec::new();
    sources(&root().join("crates/wymcp/src"), &mut files);
    let texts: Vec<String> = files
        .iter()
        .map(|f| fs::read_to_string(f).expect("readable source"))
        .collect();
    let page = fs::read_to_string(root().join("docs/configuration.md")).expect("the page");
    // (type, the section listing it, constructors documented by their own name)
    let builders = [
        ("ServerBuilder", "The server", &["new"][..]),
        ("Backends", "The stores", &["new"][..]),
        ("Limits", "Limits", &[][..]),
        (
            "StreamableHttp",
            "The Streamable HTTP transport",
            &["builder"][..],
        ),
        ("BearerAuth", "The Streamable HTTP transport", &["new"][..]),
        ("StdioConfig", "The stdio transport", &[][..]),
        ("Cli", "From the command line", &[][..]),
        ("Invocation", "From the command line", &[][..]),
        ("JwtAuthBuilder", "JWT auth", &[][..]),
        ("IntrospectionAuthBuilder", "Opaque tokens", &[][..]),
        ("ClientBuilder", "The client", &[][..]),
    ];
    let mut missing = Vec::new();
    for (ty, heading, constructors) in builders {
        let methods: Vec<String> = texts
            .iter()
            .flat_map(|text| public_methods(text, ty))
            .collect();
        assert!(!methods.is_empty(), "no `impl {ty} {{` with methods found");
        let section = section(&page, heading);
        for name in methods {
            if constructors.contains(&name.as_str()) {
                continue;
            }
            let listed = section.contains(&format!("`.{name}("))
                || section.contains(&format!("`{ty}::{name}("));
            if !listed {
                missing.push(format!("{ty}::{name} (section `{heading}`)"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "public builder methods missing from docs/configuration.md: {missing:?}"
    );
}

#[test]
fn the_scanner_finds_public_methods_and_skips_crate_ones() {
    let text = "impl Foo {\n    pub fn a(self) -> Self { if x { y } else { z } }\n    \
                pub(crate) fn b(&self) {}\n    pub async fn c(self) {}\n}\n\
                impl Bar {\n    pub fn d(self) {}\n}\nimpl Foo {\n    pub fn e() {}\n}\n";
    assert_eq!(public_methods(text, "Foo"), ["a", "c", "e"]);
    assert_eq!(public_methods(text, "Bar"), ["d"]);
}
