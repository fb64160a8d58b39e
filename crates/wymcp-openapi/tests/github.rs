//! A large real API: GitHub's REST description (`api.github.com.json` of the npm package
//! `@octokit/openapi` 23.0.2, MIT: `tests/fixtures/api.github.com.LICENSE`), committed
//! gzipped (`tests/fixtures/api.github.com.json.gz`, 0.9 MB for 13 MB). It loads within the
//! default limits, every operation becomes an action or is reported with why not, and the
//! catalogue a model reads in action form is measured against the same operations as flat
//! tools.

#![allow(clippy::unwrap_used, missing_docs)]

use std::io::Read as _;

use serde_json::Value;
use wymcp::ActionTool as _;
use wymcp_openapi::OpenApi;

mod support;

/// The package's version the committed document comes from.
const VERSION: &str = "23.0.2";

/// The document's text, unzipped.
fn document() -> String {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/api.github.com.json.gz"
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(file).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn githubs_rest_description_loads_and_folds_into_a_small_catalogue() {
    let text = document();
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
    let api = OpenApi::builder().load_str(&text).unwrap();
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
    // Each action's help says what it answers, bounded: GitHub's answers are large, so most
    // are summarized by their top-level properties.
    let notes: Vec<String> = api_tools
        .iter()
        .flat_map(|t| t.actions().entries().to_vec())
        .filter_map(|(_, schema)| schema["notes"].as_str().map(str::to_owned))
        .collect();
    let answered: Vec<&String> = notes
        .iter()
        .filter(|n| n.contains("\n\nAnswers 2"))
        .collect();
    println!(
        "{} of {served} actions say what they answer",
        answered.len()
    );
    assert!(
        answered.len() > served / 2,
        "{} of {served}",
        answered.len()
    );
    for note in &answered {
        let answer = &note[note.find("\n\nAnswers 2").unwrap()..];
        assert!(
            answer.len() < 1_500,
            "an answer note of {} bytes: {answer:.200}",
            answer.len()
        );
    }
    let summarized = answered
        .iter()
        .find(|n| n.contains("with a JSON object with ") && n.contains("(its schema is "))
        .expect("a large answer is summarized by its properties");
    println!(
        "for one: {}",
        &summarized[summarized.find("Answers 2").unwrap()..]
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
