struct Stats;

#[wymcp::plain_tool]
impl Stats {
    /// Count the notes
    async fn count(&self, #[wymcp(default = 10)] limit: u32) -> Result<u32, wymcp::tool::Failure> {
        Ok(limit)
    }
}

fn main() {}
