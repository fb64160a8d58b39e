struct Clock;

/// What time it is
#[wymcp::tool]
impl Clock {
    /// The current instant
    async fn now(&self) -> std::time::Instant {
        std::time::Instant::now()
    }
}

fn main() {
    let _ = wymcp::Server::builder().tool(Clock).build();
}
