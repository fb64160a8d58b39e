//! `#[wymcp::resources]` read through a real session (`TestClient`): a template's variables
//! parsed into the method's parameters, the declared `mime_type` on both the listing and the
//! contents a method answering a `String` serves, and contents the method typed itself kept
//! as they are.

#![allow(clippy::unwrap_used, missing_docs)]

use wymcp::Server;
use wymcp::resource::{ResourceContents, ResourceError};
use wymcp::testing::TestClient;

#[derive(Clone)]
struct Notes;

#[wymcp::resources]
impl Notes {
    /// A note as JSON, by its number
    #[wymcp(template = "notes://notes/{n}", mime_type = "application/json")]
    async fn note(&self, n: u32) -> Result<String, ResourceError> {
        match n {
            1 => Ok(r#"{"text": "Buy milk"}"#.to_owned()),
            _ => Err(ResourceError::NotFound),
        }
    }

    /// Every note, as the method types it
    #[wymcp(uri = "notes://all", mime_type = "application/json")]
    async fn all(&self) -> ResourceContents {
        ResourceContents::text("notes://all", "Buy milk").with_mime_type("text/plain")
    }
}

fn client() -> TestClient {
    let server = Server::builder()
        .resource_template(Notes.note_resource())
        .resource(Notes.all_resource())
        .build()
        .unwrap();
    TestClient::new(server)
}

#[tokio::test]
async fn a_string_answer_is_served_with_the_declared_mime_type() {
    let client = client();
    let templates = client
        .request("resources/templates/list", None)
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["mimeType"],
        "application/json"
    );
    let read = client.read_resource("notes://notes/1").await.unwrap();
    let contents = &read["contents"][0];
    assert_eq!(contents["uri"], "notes://notes/1");
    assert_eq!(contents["mimeType"], "application/json");
    assert_eq!(contents["text"], r#"{"text": "Buy milk"}"#);
}

#[tokio::test]
async fn contents_the_method_typed_keep_their_own_mime_type() {
    let read = client().read_resource("notes://all").await.unwrap();
    assert_eq!(read["contents"][0]["mimeType"], "text/plain");
}

#[tokio::test]
async fn a_variable_that_does_not_parse_or_a_missing_note_is_refused() {
    let client = client();
    let unparsed = client.read_resource("notes://notes/x").await.unwrap_err();
    assert!(
        unparsed.message().contains("\"n\""),
        "{}",
        unparsed.message()
    );
    let missing = client.read_resource("notes://notes/2").await.unwrap_err();
    assert!(
        missing.message().contains("notes://notes/2"),
        "{}",
        missing.message()
    );
}
