#[derive(Clone)]
struct Notes;

#[wymcp::resources]
impl Notes {
    /// A note
    #[wymcp(template = "notes://notes/{id}")]
    async fn note(&self, id: u32) -> u32 {
        id
    }
}

fn main() {
    let _ = Notes.note_resource();
}
