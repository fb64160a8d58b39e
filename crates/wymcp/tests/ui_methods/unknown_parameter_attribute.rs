struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Add a note
    async fn add(&self, #[wymcp(maxLenght = 5)] text: String) -> Result<String, wymcp::tool::Failure> {
        Ok(text)
    }
}

fn main() {}
