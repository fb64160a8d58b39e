struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// List the notes
    #[wymcp(example = {"limit": 10}, example = {"limit": 500})]
    async fn list(&self, #[wymcp(maximum = 100)] limit: u32) -> Result<u32, wymcp::tool::Failure> {
        Ok(limit)
    }
}

fn main() {}
