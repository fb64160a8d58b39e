/// Summarize the notes carrying a tag
#[wymcp::prompt]
fn summarize(tag: String) -> String {
    tag
}

fn main() {
    let _ = wymcp::Server::builder().prompt(summarize).build();
    let _ = summarize;
}
