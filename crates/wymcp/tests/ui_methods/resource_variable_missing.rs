#[derive(Clone)]
struct Notes;

#[wymcp::resources]
impl Notes {
    /// A note of a project
    #[wymcp(template = "notes://{project}/{id}")]
    async fn note(&self, id: u32) -> String {
        id.to_string()
    }
}

fn main() {}
