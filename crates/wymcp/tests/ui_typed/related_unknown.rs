#[derive(wymcp::ActionEnum)]
enum NoteAction {
    /// Add a note
    #[wymcp(related = ["lsit"])]
    Add,
    /// List the notes
    List,
}

fn main() {}
