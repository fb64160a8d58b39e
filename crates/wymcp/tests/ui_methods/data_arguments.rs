#[wymcp::data(Clone)]
struct Note {
    text: String,
}

fn main() {}
