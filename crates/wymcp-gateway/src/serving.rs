//! The binary's HTTP serving flags beyond [`wymcp::run()`]'s, the tasks example's set:
//! `--jwks-url`/`--issuer`/`--audience` (JWT bearer auth, each upstream action or tool then
//! asking the scopes its `scopes` key gives), `--rate-limit` and `--max-concurrent-calls`
//! (wymcp's call layers, per caller, on every upstream call), `--redis` (one node of several
//! sharing a Redis: sessions, events, bus, tasks and the rate limit's buckets) and
//! `--trusted-proxies` (the reverse proxies whose `X-Forwarded-For` names the client).
//!
//! Part of the binary (`main.rs`), not of the library: a program embedding [`Gateway`]
//! configures its own [`ServerBuilder`] and [`StreamableHttp`].
//!
//! [`Gateway`]: wymcp_gateway::Gateway

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use serde_json::json;
use wymcp::ServerBuilder;
use wymcp::middleware::{CallConcurrencyLayer, RateLimitLayer};
use wymcp::run::Cli;
use wymcp::run::Invocation;
use wymcp::transport::http::StreamableHttp;
use wymcp::transport::http::jwt::JwtAuth;

/// The `retry` of the gateway's priming events (SSE polling): how long a caller whose stream
/// ended mid-call waits before resuming it.
pub(crate) const SSE_RETRY: Duration = Duration::from_secs(1);

/// A refused command line: the message names the flag.
#[derive(Debug)]
pub(crate) struct Refused(pub(crate) String);

/// The flags this module reads, added to `cli`.
pub(crate) fn options(cli: Cli) -> Cli {
    cli.option(
        "--jwks-url",
        "URL",
        "accept JWTs signed by the keys of this JWKS (with --issuer, --audience)",
    )
    .option("--issuer", "ISS", "the issuer (`iss`) of the tokens accepted")
    .option(
        "--audience",
        "AUD",
        "this gateway's resource URL, the audience (`aud`) tokens must name",
    )
    .option(
        "--rate-limit",
        "RATE",
        "at most RATE tool calls per caller, such as 5/s or 100/min (default: no limit)",
    )
    .option(
        "--max-concurrent-calls",
        "N",
        "at most N tool calls running at once per caller (default: no limit)",
    )
    .option(
        "--redis",
        "URL",
        "serve as one node of several sharing this Redis (sessions, events, bus, tasks, rate limits)",
    )
    .option(
        "--trusted-proxies",
        "ADDRS",
        "reverse proxies (IP addresses, comma-separated) whose X-Forwarded-For names the client",
    )
}

/// What the flags asked for, read and checked before anything starts.
pub(crate) struct Serving {
    auth: Option<Auth>,
    rate: Option<RateLimitLayer>,
    concurrent: Option<usize>,
    redis: Option<String>,
    proxies: Vec<IpAddr>,
}

/// `--jwks-url`, `--issuer`, `--audience`, given together.
struct Auth {
    jwks_url: String,
    issuer: String,
    audience: String,
}

impl Serving {
    /// Reads the flags of `cli`; a value that does not parse, or an HTTP-only flag under
    /// `--stdio`, is refused naming the flag.
    pub(crate) fn read(cli: &Invocation) -> Result<Serving, Refused> {
        let auth = match (
            cli.value("--jwks-url"),
            cli.value("--issuer"),
            cli.value("--audience"),
        ) {
            (None, None, None) => None,
            (Some(jwks_url), Some(issuer), Some(audience)) => Some(Auth {
                jwks_url: jwks_url.to_owned(),
                issuer: issuer.to_owned(),
                audience: audience.to_owned(),
            }),
            (jwks, issuer, audience) => {
                let missing: Vec<&str> = [
                    (jwks, "--jwks-url"),
                    (issuer, "--issuer"),
                    (audience, "--audience"),
                ]
                .into_iter()
                .filter(|(value, _)| value.is_none())
                .map(|(_, flag)| flag)
                .collect();
                return Err(Refused(format!(
                    "--jwks-url, --issuer and --audience go together: missing {}",
                    missing.join(", ")
                )));
            }
        };
        let serving = Serving {
            auth,
            rate: cli.value("--rate-limit").map(rate).transpose()?,
            concurrent: cli
                .value("--max-concurrent-calls")
                .map(concurrent)
                .transpose()?,
            redis: cli.value("--redis").map(str::to_owned),
            proxies: cli
                .value("--trusted-proxies")
                .map(proxies)
                .transpose()?
                .unwrap_or_default(),
        };
        let http_only = serving.auth.is_some() || serving.redis.is_some();
        if (http_only || !serving.proxies.is_empty())
            && matches!(cli.transport(), wymcp::run::Transport::Stdio)
        {
            return Err(Refused(
                "--jwks-url, --redis and --trusted-proxies are for the HTTP transport; --stdio \
                 takes none of them"
                    .to_owned(),
            ));
        }
        Ok(serving)
    }

    /// `builder` with the call layers and, with `--redis`, every store on that Redis (the
    /// rate limit's buckets included: one budget for every node).
    pub(crate) async fn apply(
        &mut self,
        mut builder: ServerBuilder,
    ) -> Result<ServerBuilder, String> {
        let redis = match &self.redis {
            Some(url) => Some(
                wymcp_redis::Redis::connect(url)
                    .await
                    .map_err(|e| format!("--redis {url}: {e}"))?,
            ),
            None => None,
        };
        if let Some(max) = self.concurrent {
            builder = builder.call_layer(CallConcurrencyLayer::new(max));
        }
        if let Some(layer) = self.rate.take() {
            builder = builder.call_layer(match &redis {
                Some(redis) => layer.shared(redis.rate_limits("calls")),
                None => layer,
            });
        }
        if let Some(redis) = &redis {
            let keys = redis
                .request_state_keys()
                .await
                .map_err(|e| format!("--redis: {e}"))?;
            // A running task's node picks up a cancel or an answer given to another node at
            // its next heartbeat.
            builder = builder
                .backends(redis.backends())
                .request_state_keys(keys)
                .task_heartbeat(Duration::from_millis(250));
        }
        Ok(builder)
    }

    /// What `--jwks-url` and `--trusted-proxies` make of the HTTP transport: JWT auth with
    /// the protected-resource metadata (RFC 9728) and the challenge pointing at it. SSE
    /// polling (SEP-1699) is on: a call's stream opens with a priming event, and an upstream
    /// that ends a call's stream mid-call ends the caller's too (`Era::Session`), the caller
    /// resuming on the gateway with `Last-Event-ID` after [`SSE_RETRY`].
    pub(crate) fn configure(self) -> Result<impl FnOnce(StreamableHttp) -> StreamableHttp, String> {
        let auth = match self.auth {
            Some(auth) => {
                let jwt = JwtAuth::builder()
                    .issuer(&auth.issuer)
                    .audience(&auth.audience)
                    .jwks_url(&auth.jwks_url)
                    .build()
                    .map_err(|e| format!("--jwks-url: {e}"))?;
                let metadata = json!({
                    "resource": auth.audience,
                    "authorization_servers": [auth.issuer],
                    "bearer_methods_supported": ["header"],
                });
                Some((jwt, metadata, metadata_url(&auth.audience)))
            }
            None => None,
        };
        let proxies = self.proxies;
        Ok(move |mut http: StreamableHttp| {
            http = http.sse_polling(true).sse_retry(SSE_RETRY);
            if !proxies.is_empty() {
                http = http.trusted_proxies(proxies);
            }
            if let Some((jwt, metadata, challenge)) = auth {
                http = http
                    .auth(jwt)
                    .protected_resource(metadata)
                    .www_authenticate([("resource_metadata", challenge)]);
            }
            http
        })
    }
}

/// `N/s` or `N/min`, N from 1.
fn rate(value: &str) -> Result<RateLimitLayer, Refused> {
    let refused = || {
        Refused(format!(
            "--rate-limit: {value:?} is not a rate such as 5/s or 100/min"
        ))
    };
    let (count, unit) = value.split_once('/').ok_or_else(refused)?;
    let count: NonZeroU32 = count.trim().parse().map_err(|_| refused())?;
    match unit.trim() {
        "s" => Ok(RateLimitLayer::per_second(count)),
        "min" => Ok(RateLimitLayer::per_minute(count)),
        _ => Err(refused()),
    }
}

/// A count of calls, from 1.
fn concurrent(value: &str) -> Result<usize, Refused> {
    match value.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Refused(format!(
            "--max-concurrent-calls: {value:?} is not a number of calls (1 or more)"
        ))),
    }
}

/// Comma-separated IP addresses.
fn proxies(value: &str) -> Result<Vec<IpAddr>, Refused> {
    value
        .split(',')
        .map(|address| {
            address.trim().parse().map_err(|_| {
                Refused(format!(
                    "--trusted-proxies: {address:?} is not an IP address (such as 127.0.0.1 or ::1)"
                ))
            })
        })
        .collect()
}

/// The protected-resource metadata URL of `resource` (RFC 9728 §3.1): the well-known path
/// inserted between the host and the resource's path.
fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let path = path.trim_end_matches('/');
    format!("{scheme}://{authority}/.well-known/oauth-protected-resource{path}")
}
