#[derive(Clone)]
struct Notes;

#[wymcp::resources]
impl Notes {
    /// A note
    #[wymcp(template = "notes://notes/{id}")]
    async fn note(&self, id: u32, number: u32) -> String {
        format!("{id} {number}")
    }
}

fn main() {}
