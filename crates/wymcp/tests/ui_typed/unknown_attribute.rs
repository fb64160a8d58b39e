#[derive(wymcp::ActionEnum)]
enum TaskAction {
    /// List tasks
    #[wymcp(rename = "list", requird = ["id"])]
    List,
}

fn main() {}
