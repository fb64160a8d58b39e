struct Notes;

impl Notes {
    /// Summarize the notes
    #[wymcp::prompt]
    async fn summarize(&self, tag: String) -> String {
        tag
    }
}

fn main() {}
