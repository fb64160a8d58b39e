struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(&self, text: &str) -> Result<String, wymcp::tool::Failure> {
        Ok(text.to_owned())
    }
}

fn main() {}
