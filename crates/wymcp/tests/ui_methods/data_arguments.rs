#[wymcp::data(Clone = true)]
struct Note {
    text: String,
}

fn main() {}
