#[derive(Clone)]
struct Notes;

#[wymcp::prompts]
impl Notes {
    fn helper(&self) -> u32 {
        1
    }
}

fn main() {}
