//! A large real API: GitHub's REST description (`api.github.com.json` of the npm package
//! `@octokit/openapi`, MIT, about 13 MB and a thousand operations), installed by `.ci/run`
//! under the target directory (it is not committed: its size). It loads within the default
//! limits, every operation becomes an action or is reported with why not, and the catalogue a
//! model reads in action form is measured against the same operations as flat tools. Skipped,
//! saying so in one line, when the package is not installed; `WYMCP_REQUIRE_SERVICES=1` makes
//! that a failure.

#![allow(clippy::unwrap_used, missing_docs)]

use std::path::PathBuf;

use serde_json::Value;
use wymcp::ActionTool as _;
use wymcp_openapi::OpenApi;

mod support;

/// The package's version, as `.ci/run` installs it.
const VERSION: &str = "23.0.2";
const REQUIRE: &str = "WYMCP_REQUIRE_SERVICES";

/// The document, when installed (else `None`, after the skip line).
fn document() -> Option<PathBuf> {
    // target/<profile>/deps/github-… → target/octokit-openapi-<VERSION>
    let exe = std::env::current_exe().unwrap();
    let target = exe.ancestors().nth(3).unwrap().to_path_buf();
    let file = target
        .join(format!("octokit-openapi-{VERSION}"))
        .join("node_modules/@octokit/openapi/generated/api.github.com.json");
    if file.is_file() {
        return Some(file);
    }
    let install = format!(
        "install it with `mkdir -p {dir} && cd {dir} && npm install @octokit/openapi@{VERSION}`",
        dir = target.join(format!("octokit-openapi-{VERSION}")).display()
    );
    assert!(
        std::env::var(REQUIRE).as_deref() != Ok("1"),
        "github: {install}, and {REQUIRE}=1 requires it"
    );
    println!("skipped github::*: {install}; {REQUIRE}=1 makes this a failure");
    None
}

#[test]
fn githubs_rest_description_loads_and_folds_into_a_small_catalogue() {
    let Some(file) = document() else {
        return;
    };
    let text = std::fs::read_to_string(&file).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    let declared: usize = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| {
            [
                "get", "put", "post", "delete", "options", "head", "patch", "trace",
            ]
            .iter()
            .filter(|m| item.get(**m).is_some())
            .count()
        })
        .sum();
    let api = OpenApi::builder().load_file(&file).unwrap();
    for skipped in api.skipped() {
        println!("skipped {}: {}", skipped.operation(), skipped.reason());
        assert!(!skipped.reason().is_empty());
    }
    let tools = api.tool_names().len();
    let skipped = api.skipped().len();
    let api_tools = api.into_tools();
    let served: usize = api_tools.iter().map(|t| t.actions().entries().len()).sum();
    // Every operation is served or reported.
    assert_eq!(
        served + skipped,
        declared,
        "{served} served + {skipped} skipped"
    );
    let (action_bytes, flat_bytes, operations) = support::catalogue::sizes(api_tools);
    assert_eq!(operations, served);
    let ratio = action_bytes as f64 / flat_bytes as f64;
    println!(
        "api.github.com.json ({VERSION}): {declared} operations, {served} served as actions of \
         {tools} tools, {skipped} skipped; action form {action_bytes} bytes, flat \
         {flat_bytes} bytes, ratio {ratio:.3}"
    );
    assert!(
        ratio <= 0.2,
        "the action catalogue is {ratio:.3} of flat tools"
    );
}
