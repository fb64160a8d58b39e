struct Notes;

/// Notes
#[wymcp::tool]
impl Default for Notes {
    fn default() -> Self {
        Notes
    }
}

fn main() {}
