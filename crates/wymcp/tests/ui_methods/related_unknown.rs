struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    #[wymcp(related = ["lsit"])]
    async fn add(&self, text: String) -> Result<String, wymcp::tool::Failure> {
        Ok(text)
    }

    /// List the notes
    async fn list(&self) -> Result<u32, wymcp::tool::Failure> {
        Ok(0)
    }
}

fn main() {}
