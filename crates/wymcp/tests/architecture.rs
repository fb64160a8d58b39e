//! The crate's top-level modules import each other without a cycle (docs/architecture.md,
//! "The top-level import graph"): read from the sources as they are, so a change that closes
//! a circle fails here, naming the files that do it.
//!
//! A module imports another when one of its files (tests left out) names a path under it,
//! `crate::other::…`, `crate::{other, …}`, or a name the crate root re-exports from it
//! (`crate::Server` is `server`'s). Doc comments name paths only for links and are left out.

#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeMap<String, String>>;

#[test]
fn the_top_level_modules_form_no_cycle() {
    let graph = import_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graph.len() > 10, "the scan found the modules: {graph:?}");
    let cycles: Vec<Vec<String>> = strongly_connected(&graph)
        .into_iter()
        .filter(|component| component.len() > 1)
        .collect();
    let mut why = String::new();
    for component in &cycles {
        for from in component {
            for (to, file) in &graph[from] {
                if component.contains(to) {
                    why.push_str(&format!("\n  {from} -> {to} (first in {file})"));
                }
            }
        }
    }
    assert!(cycles.is_empty(), "import cycles {cycles:?}:{why}");
}

/// What the transports, the client and the testing kit may import. The transports are at
/// docs/architecture.md's goal: a transport hands the serving core bytes and transport facts
/// and writes the frames it gives back, importing only `serve` (which also names for it the
/// few types of other modules a transport's API shows: `Server`, `Identity`, the session
/// backends), `protocol` and `limits`. The testing kit's `TestClient` is served by the core
/// like a transport's client (`serve`); the kit's other modules are its direct helpers
/// (`test_context`, `call_tool` with a context of the test's making, the result types), which
/// name `context`, `server` and `tool`. An import outside a list fails here, and
/// an edge removed from the code must be removed from its list, so the lists only shrink.
#[test]
fn the_transports_and_the_testing_kit_import_only_what_they_are_allowed() {
    let graph = import_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let allowed: [(&str, &[&str]); 3] = [
        ("transport", &["limits", "protocol", "serve"]),
        // The client speaks the wire and nothing of the server: the gateway will build on it
        // without a cycle through the serving core.
        ("client", &["protocol"]),
        (
            "testing",
            &["context", "protocol", "serve", "server", "tool"],
        ),
    ];
    for (module, allowed) in allowed {
        let imports: Vec<&str> = graph[module].keys().map(String::as_str).collect();
        let extra: Vec<String> = graph[module]
            .iter()
            .filter(|(to, _)| !allowed.contains(&to.as_str()))
            .map(|(to, file)| format!("{to} (first in {file})"))
            .collect();
        assert!(
            extra.is_empty(),
            "{module} imports more than it may: {extra:?}"
        );
        let gone: Vec<&&str> = allowed.iter().filter(|a| !imports.contains(a)).collect();
        assert!(
            gone.is_empty(),
            "{module} no longer imports {gone:?}: take them off its list"
        );
    }
}

/// The serving core names no extension: the tasks and skills extensions register their
/// methods, capabilities, `tools/call` hook and listen items with the server
/// (`server/extension.rs`), and the core reaches them only through that registry.
#[test]
fn the_serving_core_names_no_extension() {
    let graph = import_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let named: Vec<String> = graph["serve"]
        .iter()
        .filter(|(to, _)| ["task", "skill"].contains(&to.as_str()))
        .map(|(to, file)| format!("{to} (first in {file})"))
        .collect();
    assert!(named.is_empty(), "serve names an extension: {named:?}");
}

/// One method table, one dispatch: neither era's serving (`serve/session.rs`,
/// `serve/stateless/`) matches on a `Method` variant; both read the handler column of the
/// method table (`Method::handler`) and hand the server's methods to its one dispatch,
/// `Server::serve_request` (`server/methods.rs`; `tools/call` to its handler, `call_request`,
/// directly), so a method's handler is named once.
#[test]
fn both_eras_dispatch_through_the_method_table() {
    let serve = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/serve");
    let mut files = vec![serve.join("session.rs")];
    rust_files(&serve.join("stateless"), &mut files);
    let mut arms = Vec::new();
    for file in &files {
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for (at, _) in code.match_indices("Method::") {
            let rest = &code[at + "Method::".len()..];
            let variant: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if !variant.starts_with(|c: char| c.is_ascii_uppercase()) {
                continue;
            }
            let after = rest[variant.len()..].trim_start_matches([')', ' ']);
            if after.starts_with("=>") || after.starts_with('|') || after.starts_with("if ") {
                let name = file.strip_prefix(&serve).unwrap().display();
                arms.push(format!("Method::{variant} in serve/{name}"));
            }
        }
    }
    assert!(files.len() > 3, "the scan found the eras' files: {files:?}");
    assert!(arms.is_empty(), "an era matches on methods: {arms:?}");
    // A `tools/call` is served by the handler the table names for it (`Server::call_request`,
    // without the one dispatch's future around it: the hot path); every other request of the
    // server's by `Server::serve_request`.
    for (file, era) in [("call.rs", "session"), ("stateless/mod.rs", "stateless")] {
        let code = code_of(&std::fs::read_to_string(serve.join(file)).unwrap());
        assert!(
            code.contains(".call_request("),
            "the {era} era serves tools/call by Server::call_request (serve/{file})"
        );
    }
    for (file, era) in [("session.rs", "session"), ("stateless/mod.rs", "stateless")] {
        let code = code_of(&std::fs::read_to_string(serve.join(file)).unwrap());
        assert!(
            code.contains(".serve_request("),
            "the {era} era serves its other requests by Server::serve_request (serve/{file})"
        );
    }
}

/// The crate root is the user API and stays small (issue 41: at most 40 names; modules are
/// counted apart), and no public type has two paths. Read from the committed public-API
/// snapshot (`api/wymcp.txt`, which `.ci/public-api` keeps equal to the code).
#[test]
fn the_crate_root_has_at_most_40_names_and_every_type_one_path() {
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../api/wymcp.txt");
    let in_repository = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../Cargo.lock")
        .exists();
    let Ok(api) = std::fs::read_to_string(&snapshot) else {
        // A packaged crate has no snapshot; in the repository one must be read.
        assert!(!in_repository, "no API snapshot at {}", snapshot.display());
        return;
    };
    let mut root = BTreeSet::new();
    let mut paths: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in api.lines() {
        // An item's attributes (`#[non_exhaustive]`) and qualifiers (`async`, `const`) come
        // before or after `pub`; the kind is the word before the path.
        let mut line = line.trim_start();
        while line.starts_with("#[") {
            let Some(end) = line.find("] ") else { break };
            line = &line[end + 2..];
        }
        let Some(mut rest) = line.strip_prefix("pub ") else {
            continue;
        };
        for qualifier in ["async ", "const fn ", "unsafe "] {
            if let Some(after) = rest.strip_prefix(qualifier) {
                rest = if qualifier == "const fn " {
                    &rest["const ".len()..]
                } else {
                    after
                };
            }
        }
        let Some((kind, item)) = rest.split_once(' ') else {
            continue;
        };
        let path: String = item
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .next()
            .unwrap_or_default()
            .trim_end_matches(':')
            .to_owned();
        let segments: Vec<&str> = path.split("::").collect();
        if segments.first() != Some(&"wymcp") {
            continue;
        }
        if segments.len() == 2 && kind != "mod" {
            root.insert(segments[1].to_owned());
        }
        // An associated type (`Service::Response`) is no type of its own.
        let associated = kind == "type"
            && segments
                .len()
                .checked_sub(2)
                .and_then(|parent| segments[parent].chars().next())
                .is_some_and(char::is_uppercase);
        if ["struct", "enum", "trait", "type"].contains(&kind) && !associated {
            let name = segments[segments.len() - 1].to_owned();
            paths.entry(name).or_default().insert(path.clone());
        }
    }
    assert!(root.len() >= 20, "the scan read the root: {root:?}");
    for expected in [
        "Server",
        "ServerInfo",
        "Visibility",
        "run",
        "ToolPolicy",
        "tool",
    ] {
        assert!(
            root.contains(expected),
            "the scan missed {expected}: {root:?}"
        );
    }
    assert!(
        root.len() <= 40,
        "{} names at the crate root (at most 40): {root:?}",
        root.len()
    );
    let twice: Vec<_> = paths
        .iter()
        .filter(|(_, at)| at.len() > 1)
        // Two types that share a name: the client's result of a call and the testing kit's.
        .filter(|(name, _)| name.as_str() != "ToolResult")
        .collect();
    assert!(twice.is_empty(), "types with two paths: {twice:?}");
}

/// The scan itself: a circle written into a small tree is found, through a root re-export.
/// Type erasure read back is the exception: each `downcast`/`downcast_ref` in the library's
/// code says why in a comment starting "Downcast, justified" within the eight lines above it
/// (a boxed error's source, a panic payload, the cut of a type-level cycle), so a new one is a
/// reviewed choice, not a way around the import graph.
#[test]
fn every_downcast_in_the_library_says_why() {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut unjustified = Vec::new();
    let mut seen = 0;
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let trimmed = line.trim_start();
            if trimmed.starts_with("//") || trimmed.starts_with("#[cfg(test)]") {
                continue;
            }
            if !(line.contains(".downcast::<")
                || line.contains(".downcast_ref")
                || line.contains(".downcast_ref::<")
                || line.contains(".downcast()"))
            {
                continue;
            }
            seen += 1;
            let above = &lines[i.saturating_sub(8)..i];
            if !above.iter().any(|l| l.contains("Downcast, justified")) {
                unjustified.push(format!("{}:{}", file.display(), i + 1));
            }
        }
    }
    assert!(seen >= 5, "the scan found the known downcasts: {seen}");
    assert!(
        unjustified.is_empty(),
        "downcasts without a justification: {unjustified:?}"
    );
}

#[test]
fn a_cycle_through_a_root_reexport_is_found() {
    let dir = std::env::temp_dir().join(format!("wymcp-architecture-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "mod a;\nmod b;\nmod d;\npub use b::{Thing, Other};\n",
    );
    write("d.rs", "use crate::{c::{X, Y}, b};\n");
    write("a/mod.rs", "use crate::Thing;\n/// [`x`](crate::c::X)\n");
    write("b.rs", "pub struct Thing;\nfn f() { crate::a::g() }\n");
    write("c.rs", "#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n");
    let graph = import_graph(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(graph["a"].keys().collect::<Vec<_>>(), ["b"]);
    assert_eq!(graph["b"].keys().collect::<Vec<_>>(), ["a"]);
    assert!(graph["c"].is_empty(), "tests are left out: {graph:?}");
    // A name after a nested group is read too.
    assert_eq!(graph["d"].keys().collect::<Vec<_>>(), ["b", "c"]);
    let cycles = strongly_connected(&graph);
    assert!(
        cycles.contains(&vec!["a".to_owned(), "b".to_owned()]),
        "{cycles:?}"
    );
}

/// Each top-level module, the modules it imports, and the first file that does.
fn import_graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let module_of = |file: &Path| -> Option<String> {
        let first = file.strip_prefix(src).ok()?.components().next()?;
        let name = first
            .as_os_str()
            .to_str()?
            .trim_end_matches(".rs")
            .to_owned();
        (name != "lib").then_some(name)
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let reexports = root_reexports(&code_of(&lib), &modules);
    let mut graph: Graph = modules
        .iter()
        .map(|m| (m.clone(), BTreeMap::new()))
        .collect();
    for file in &files {
        let Some(from) = module_of(file) else {
            continue;
        };
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for name in named_paths(&code) {
            let to = if modules.contains(&name) {
                name
            } else if let Some(module) = reexports.get(&name) {
                module.clone()
            } else {
                continue;
            };
            if to != from {
                let shown = file.strip_prefix(src).unwrap().display().to_string();
                graph.get_mut(&from).unwrap().entry(to).or_insert(shown);
            }
        }
    }
    graph
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code: its test module and its comments left out.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|l| l.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// Every first segment after `crate::`, including each name of a `crate::{…}` group.
fn named_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            names.extend(top_level_items(group).map(|item| first_ident(item.trim())));
        } else {
            names.push(first_ident(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

/// The items of a `{…}` group whose opening brace was just passed, split at the commas of its
/// own level (`a::{B, C}, d` is two items), up to its closing brace.
fn top_level_items(group: &str) -> impl Iterator<Item = &str> {
    let mut depth = 0usize;
    let mut start = 0;
    let mut items = Vec::new();
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[start..at]);
                return items.into_iter();
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    items.push(&group[start..]);
    items.into_iter()
}

fn first_ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The names the crate root re-exports (`pub use module::…::{A, B};`, `pub use module::…::A;`),
/// each with the module it comes from.
fn root_reexports(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        // Attributes may stand before the statement (`#[doc(hidden)]`).
        let Some(at) = statement.find("pub use ") else {
            continue;
        };
        let path = &statement[at + "pub use ".len()..];
        let module = first_ident(path);
        if !modules.contains(&module) {
            continue;
        }
        let tail = match path.find('{') {
            Some(open) => &path[open + 1..path.rfind('}').unwrap_or(path.len())],
            None => path.rsplit("::").next().unwrap_or_default(),
        };
        for item in tail.split(',') {
            let name = item.rsplit(" as ").next().unwrap_or_default().trim();
            let name = first_ident(name.rsplit("::").next().unwrap_or_default());
            if !name.is_empty() && !modules.contains(&name) {
                names.insert(name, module.clone());
            }
        }
    }
    names
}

/// Tarjan's strongly connected components, each sorted.
fn strongly_connected(graph: &Graph) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let at = self.index.len();
            self.index.insert(v, at);
            self.low.insert(v, at);
            self.stack.push(v);
            for w in self.graph[v].keys() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                component.sort();
                self.found.push(component);
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}
