//! A notes server in wymcp's shortest form; `cargo run -p wymcp-notes -- --stdio`.
use wymcp::tool::Failure;
use wymcp::{Resource, Server};

#[wymcp::data(Clone)]
struct Note {
    id: u32,
    text: String,
    tags: Vec<String>,
}

#[derive(Clone, Default)]
pub(crate) struct Notes(std::sync::Arc<tokio::sync::Mutex<Vec<Note>>>);

/// Keep short notes: add them, list them, delete them.
#[wymcp::tool]
impl Notes {
    /// Add a note
    #[wymcp(example = {"text": "Buy milk", "tags": ["errands"]}, related = ["list"])]
    async fn add(&self, text: String, #[wymcp(default = [])] tags: Vec<String>) -> Note {
        let mut notes = self.0.lock().await;
        let id = notes.last().map_or(1, |n| n.id + 1);
        let note = Note { id, text, tags };
        notes.push(note.clone());
        note
    }
    /// List the notes, oldest first
    async fn list(&self, tag: Option<String>, #[wymcp(default = 20)] limit: u8) -> Vec<Note> {
        let mut notes = self.0.lock().await.clone();
        notes.retain(|n| tag.iter().all(|t| n.tags.contains(t)));
        notes.into_iter().take(limit.into()).collect()
    }
    /// Delete a note by id
    async fn delete(&self, id: u32) -> Result<Note, Failure> {
        let mut notes = self.0.lock().await;
        let at = notes.iter().position(|n| n.id == id);
        Ok(notes.remove(at.ok_or_else(|| Failure::msg(format!("no note {id}")))?))
    }
    /// Count the notes carrying each tag
    #[wymcp(plain)]
    async fn tag_counts(&self) -> std::collections::BTreeMap<String, u32> {
        let mut counts = std::collections::BTreeMap::new();
        for tag in self.0.lock().await.iter().flat_map(|n| n.tags.clone()) {
            *counts.entry(tag).or_default() += 1;
        }
        counts
    }
    /// Ask for a summary of the notes carrying a tag
    #[wymcp(prompt)]
    async fn summarize(&self, tag: String) -> String {
        format!("List my notes tagged {tag:?} with the notes tool, then summarize them briefly.")
    }
}

pub(crate) fn server() -> Result<Server, wymcp::ConfigurationError> {
    let guide = Resource::text("notes://guide", "guide", "Tag notes, then list by tag.");
    let notes = Server::builder().name("notes").tool(Notes::default());
    notes.resource(guide).build()
}

wymcp::main!(server);
