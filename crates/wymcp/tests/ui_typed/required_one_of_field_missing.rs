#[wymcp::data]
struct GetTask {
    id: Option<u32>,
    title: Option<String>,
}

#[derive(wymcp::ActionEnum)]
enum TaskAction {
    /// Get a task by id or by title
    #[wymcp(required_one_of = [["id"], ["titel"]])]
    Get(GetTask),
}

fn main() {}
