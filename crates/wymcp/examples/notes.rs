//! A notes server in the shortest form: `cargo run -p wymcp --example notes` serves it on stdio.
use std::sync::Mutex;

use serde::Serialize;
use wymcp::{Failure, Resource, Server};

#[derive(Clone, Serialize)]
struct Note {
    id: u32,
    text: String,
    tags: Vec<String>,
}

#[derive(Default)]
struct Notes {
    notes: Mutex<Vec<Note>>,
    next: Mutex<u32>,
}

/// Keep short notes: add them, list them, delete them.
#[wymcp::tool]
impl Notes {
    /// Add a note
    #[wymcp(example = {"text": "Buy milk", "tags": ["errands"]}, related = ["list"])]
    async fn add(
        &self,
        /// What to remember
        #[wymcp(minLength = 1, maxLength = 500)]
        text: String,
        /// Labels to find it by
        #[wymcp(default = [])]
        tags: Vec<String>,
    ) -> Result<Note, Failure> {
        let mut next = self
            .next
            .lock()
            .map_err(|_| Failure::msg("store poisoned"))?;
        *next += 1;
        let note = Note {
            id: *next,
            text,
            tags,
        };
        self.notes
            .lock()
            .map_err(|_| Failure::msg("store poisoned"))?
            .push(note.clone());
        Ok(note)
    }

    /// List the notes, oldest first
    async fn list(
        &self,
        /// Only the notes carrying this tag
        tag: Option<String>,
        /// How many at most
        #[wymcp(default = 20, minimum = 1, maximum = 100)]
        limit: u32,
    ) -> Result<Vec<Note>, Failure> {
        let notes = self
            .notes
            .lock()
            .map_err(|_| Failure::msg("store poisoned"))?;
        let wanted = |n: &&Note| tag.as_ref().is_none_or(|t| n.tags.contains(t));
        Ok(notes
            .iter()
            .filter(wanted)
            .take(limit as usize)
            .cloned()
            .collect())
    }

    /// Delete a note by id
    async fn delete(
        &self,
        /** The note's id */
        id: u32,
    ) -> Result<Note, Failure> {
        let mut notes = self
            .notes
            .lock()
            .map_err(|_| Failure::msg("store poisoned"))?;
        let at = notes.iter().position(|n| n.id == id);
        at.map(|i| notes.remove(i))
            .ok_or_else(|| Failure::msg(format!("no note {id}")))
    }
}

/// The server: the notes tool and a resource saying how to use it.
pub(crate) fn server() -> Result<Server, wymcp::ConfigurationError> {
    let guide = Resource::text(
        "notes://guide",
        "guide",
        "Add notes with tags, list by tag.",
    );
    Server::builder()
        .name("notes")
        .tool(Notes::default())
        .resource(guide)
        .build()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    Ok(wymcp::transport::stdio::serve(server()?).await?)
}
