#[derive(Clone)]
struct Notes;

#[wymcp::prompts]
impl Notes {
    /// Summarize the notes
    #[wymcp(name = "summary")]
    async fn summarize(&self) -> String {
        String::new()
    }
}

fn main() {}
