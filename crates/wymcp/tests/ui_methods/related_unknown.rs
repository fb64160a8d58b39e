struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    #[wymcp(related = ["lsit"])]
    async fn add(&self, text: String) -> Result<String, wymcp::Failure> {
        Ok(text)
    }

    /// List the notes
    async fn list(&self) -> Result<u32, wymcp::Failure> {
        Ok(0)
    }
}

fn main() {}
