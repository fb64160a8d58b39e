#[wymcp::data]
struct AddNote {
    text: String,
}

struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(&self, wymcp::Params(note): wymcp::Params<AddNote>, pinned: bool) -> Result<bool, wymcp::Failure> {
        Ok(pinned && note.text.is_empty())
    }
}

fn main() {}
