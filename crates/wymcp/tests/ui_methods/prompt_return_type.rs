/// Summarize the notes
#[wymcp::prompt]
async fn summarize(tag: String) -> u32 {
    tag.len() as u32
}

fn main() {}
