#[derive(Clone)]
struct Notes;

/// Keep short notes
#[wymcp::tool]
impl Notes {
    /// List the notes
    async fn list(&self) -> Vec<String> {
        Vec::new()
    }
    /// Summarize the notes carrying a tag
    #[wymcp(prompt)]
    async fn summarize(tag: String) -> String {
        tag
    }
}

fn main() {}
