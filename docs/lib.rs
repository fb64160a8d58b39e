//! The repository's README and guide (`docs/*.md`), their Rust code compiled as doctests:
//! `cargo test -p wymcp-guide --doc`. A package of its own, never published, so that the
//! published crates' doctests reach nothing outside them.

/// The README's code, compiled as a doctest so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The guide's pages (`docs/*.md`), their code compiled as doctests so it stays true
/// (`tests/links.rs` checks that every page is listed here).
#[cfg(doctest)]
pub mod guide_doctests {
    #[doc = include_str!("getting-started.md")]
    pub struct GettingStarted;
    #[doc = include_str!("tools-and-gates.md")]
    pub struct ToolsAndGates;
    #[doc = include_str!("help-and-hints.md")]
    pub struct HelpAndHints;
    #[doc = include_str!("plain-and-typed-tools.md")]
    pub struct PlainAndTypedTools;
    #[doc = include_str!("resources-and-prompts.md")]
    pub struct ResourcesAndPrompts;
    #[doc = include_str!("transports.md")]
    pub struct Transports;
    #[doc = include_str!("auth.md")]
    pub struct Auth;
    #[doc = include_str!("client.md")]
    pub struct Client;
    #[doc = include_str!("subscriptions.md")]
    pub struct Subscriptions;
    #[doc = include_str!("skills.md")]
    pub struct Skills;
    #[doc = include_str!("tasks.md")]
    pub struct Tasks;
    #[doc = include_str!("limits.md")]
    pub struct Limits;
    #[doc = include_str!("middleware.md")]
    pub struct Middleware;
    #[doc = include_str!("scale-out.md")]
    pub struct ScaleOut;
    #[doc = include_str!("openapi.md")]
    pub struct OpenApi;
    #[doc = include_str!("gateway.md")]
    pub struct Gateway;
    #[doc = include_str!("composition.md")]
    pub struct Composition;
    #[doc = include_str!("multi-round-trip.md")]
    pub struct MultiRoundTrip;
    #[doc = include_str!("telemetry.md")]
    pub struct Telemetry;
    #[doc = include_str!("testing.md")]
    pub struct Testing;
    #[doc = include_str!("configuration.md")]
    pub struct Configuration;
    #[doc = include_str!("architecture.md")]
    pub struct Architecture;
    #[doc = include_str!("performance.md")]
    pub struct Performance;
    #[doc = include_str!("performance-history.md")]
    pub struct PerformanceHistory;
    #[doc = include_str!("fuzzing.md")]
    pub struct Fuzzing;
    #[doc = include_str!("README.md")]
    pub struct Index;
}
