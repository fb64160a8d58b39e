struct Stats;

#[wymcp::plain_tool]
impl Stats {
    /// Count the notes since a moment
    async fn count(&self, #[wymcp(format = "date-tim")] since: String) -> Result<String, wymcp::tool::Failure> {
        Ok(since)
    }
}

fn main() {}
