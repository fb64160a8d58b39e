struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// List the notes
    async fn list(&self, #[wymcp(default = "twenty")] limit: u32) -> Result<u32, wymcp::tool::Failure> {
        Ok(limit)
    }
}

fn main() {}
