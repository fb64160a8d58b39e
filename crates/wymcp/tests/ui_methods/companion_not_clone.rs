struct Notes;

/// Keep short notes
#[wymcp::tool]
impl Notes {
    /// List the notes
    async fn list(&self) -> Vec<String> {
        Vec::new()
    }
    /// Count the notes
    #[wymcp(plain)]
    async fn count(&self) -> std::collections::BTreeMap<String, u32> {
        std::collections::BTreeMap::new()
    }
}

fn main() {}
