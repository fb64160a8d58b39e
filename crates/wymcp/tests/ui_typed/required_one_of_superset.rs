struct GetTask;

#[derive(wymcp::ActionEnum)]
enum TaskAction {
    /// Get a task by id, or by id and title
    #[wymcp(required_one_of = [["id"], ["id", "title"]])]
    Get(GetTask),
}

fn main() {}
