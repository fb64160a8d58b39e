struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Remind me
    async fn remind(&self, #[wymcp(format = "dat-time")] at: String) -> Result<String, wymcp::tool::Failure> {
        Ok(at)
    }
}

fn main() {}
