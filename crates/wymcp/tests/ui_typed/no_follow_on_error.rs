use wymcp::{ActionEnum, ActionResult, Context, Reply, TypedActionTool};

#[derive(ActionEnum)]
enum NoteAction {
    /// Add a note
    /// on two lines
    Add,
}

struct Notes;

impl TypedActionTool for Notes {
    type Action = NoteAction;
    fn name(&self) -> &str { "notes" }
    fn description(&self) -> &str { "Notes" }
    async fn run(&self, _action: NoteAction, _ctx: Context) -> ActionResult {
        Ok(Reply::new(serde_json::json!({})))
    }
}

fn main() {
    let _ = wymcp::Server::builder().typed_tool(Notes).build();
    let _ = NoteAction::actions();
}
