#[wymcp::data]
struct AddNote {
    text: String,
}

struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(&self, wymcp::tool::Params(note): wymcp::tool::Params<AddNote>, pinned: bool) -> Result<bool, wymcp::tool::Failure> {
        Ok(pinned && note.text.is_empty())
    }
}

fn main() {}
