struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(&self, /** What to remember */ #[wymcp(default = 5)] text: String) -> Result<String, wymcp::tool::Failure> {
        Ok(text)
    }
}

fn main() {
    let _ = wymcp::Server::builder().tool(Notes).build();
    let _ = Notes.add("milk".into());
}
