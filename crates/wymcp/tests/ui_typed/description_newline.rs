#[derive(wymcp::ActionEnum)]
enum TaskAction {
    /// Create a task
    /// with a second line in the first paragraph
    Create,
}

fn main() {}
