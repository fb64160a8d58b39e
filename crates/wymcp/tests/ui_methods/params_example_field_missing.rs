use wymcp::tool::Params;

#[wymcp::data]
#[serde(rename_all = "camelCase")]
struct AddNote {
    note_text: String,
}

struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    #[wymcp(example = {"noteText": "Buy milk"}, example = {"note_text": "Call Ada"})]
    async fn add(&self, Params(note): Params<AddNote>) -> Result<String, wymcp::tool::Failure> {
        Ok(note.note_text)
    }
}

fn main() {}
