/// Summarize the notes
#[wymcp::prompt]
fn summarize(tag: String) -> String {
    tag
}

fn main() {}
