//! (g) wymcp-gateway in front of `wymcp_calc`: the gateway's own cost of a forwarded call.
//!
//! `gateway_calc <addr> <upstream-url>`: serves the upstream at `<upstream-url>` (a running
//! `wymcp_calc`) through the gateway in `expose = "tools"` mode with an empty prefix, so a
//! client calls the same `calc` tool with the same arguments as on `wymcp_calc` itself; prints
//! `listening on <addr>` once bound. `instructions.sh gateway` starts both and counts this
//! process's instructions only (issue 42's benchmark: the gateway's CPU per forwarded call
//! against wymcp serving the tool in-process).

use wymcp::transport::http::{HttpServer, StreamableHttp};
use wymcp_gateway::{Expose, Gateway, GatewayConfig, UpstreamConfig};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:0".to_owned());
    let upstream = args
        .next()
        .ok_or("usage: gateway_calc <addr> <upstream-url>")?;
    let config = GatewayConfig::new().upstream(
        UpstreamConfig::http("calc", upstream)
            .expose(Expose::Tools)
            .prefix(""),
    );
    let gateway = Gateway::start(config).await;
    for notice in gateway.notices() {
        eprintln!("gateway_calc: {notice}");
    }
    let server = gateway
        .register(wymcp::Server::builder().name("gateway").version("1.0.0"))
        .build()?;
    // Room for the 10,000 idle sessions of the scale figure plus the 64 of the load, as
    // wymcp_calc has.
    let builder = StreamableHttp::builder(server).max_sessions(20_000);
    let http = HttpServer::bind(addr.as_str(), builder).await?;
    println!("listening on {}", http.local_addr()?);
    http.run().await?;
    Ok(())
}
