struct Notes;

/// Notes
#[wymcp::tool]
impl Notes {
    /// Get a note by id or by title
    #[wymcp(required_one_of = [["id"], ["titel"]])]
    async fn get(&self, id: Option<u32>, title: Option<String>) -> Result<String, wymcp::tool::Failure> {
        Ok(format!("{id:?} {title:?}"))
    }
}

fn main() {}
