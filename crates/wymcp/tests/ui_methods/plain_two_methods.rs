struct Stats;

#[wymcp::plain_tool]
impl Stats {
    /// Count the notes
    async fn count(&self) -> Result<u32, wymcp::tool::Failure> {
        Ok(0)
    }

    /// Count the tags
    async fn tags(&self) -> Result<u32, wymcp::tool::Failure> {
        Ok(0)
    }
}

fn main() {}
