#[derive(Clone)]
struct Notes;

/// Keep short notes
#[wymcp::tool]
impl Notes {
    /// List the notes
    async fn list(&self) -> Vec<String> {
        Vec::new()
    }
    /// Summarize the notes
    #[wymcp(prompt = true)]
    async fn summarize(&self) -> String {
        String::new()
    }
}

fn main() {}
