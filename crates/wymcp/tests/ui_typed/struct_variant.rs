#[derive(wymcp::ActionEnum)]
enum TaskAction {
    /// Create a task
    Create { title: String },
}

fn main() {}
