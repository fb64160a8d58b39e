struct Notes;

/// Notes
#[wymcp::tool(title = "Notes")]
impl Notes {
    /// Add a note
    async fn add(&self, text: String) -> Result<String, wymcp::Failure> {
        Ok(text)
    }
}

fn main() {}
