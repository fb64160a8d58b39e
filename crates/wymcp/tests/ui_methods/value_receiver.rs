struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(self, text: String) -> Result<String, wymcp::tool::Failure> {
        Ok(text)
    }
}

fn main() {}
