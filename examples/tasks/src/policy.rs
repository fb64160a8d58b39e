//! `--rate-limit N/s` and `--max-concurrent-calls N`: the command line's operation
//! middleware, on every tool call (call layers: listing the tools spends nothing), counted per caller (the authenticated principal, else the
//! client: its session, its address, or stdio's one client).

use std::num::NonZeroU32;

use wymcp::ServerBuilder;
use wymcp::middleware::{CallConcurrencyLayer, RateLimitLayer};

/// A rate: `N/s` or `N/min`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rate {
    PerSecond(NonZeroU32),
    PerMinute(NonZeroU32),
}

/// The policies the command line asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Policy {
    pub(crate) rate: Option<Rate>,
    pub(crate) concurrent: Option<usize>,
}

impl Policy {
    /// Reads `--rate-limit` and `--max-concurrent-calls` (either may be absent).
    pub(crate) fn parse(rate: Option<&str>, concurrent: Option<&str>) -> Result<Policy, String> {
        Ok(Policy {
            rate: rate.map(parse_rate).transpose()?,
            concurrent: concurrent.map(parse_concurrent).transpose()?,
        })
    }

    /// `builder` with the policies' layers (none when none was asked for), the rate limit as
    /// `share` makes it (with `--redis`: its buckets in Redis, one budget for every node).
    pub(crate) fn apply(
        self,
        mut builder: ServerBuilder,
        share: impl FnOnce(RateLimitLayer) -> RateLimitLayer,
    ) -> ServerBuilder {
        if let Some(max) = self.concurrent {
            builder = builder.call_layer(CallConcurrencyLayer::new(max));
        }
        match self.rate {
            Some(Rate::PerSecond(n)) => builder.call_layer(share(RateLimitLayer::per_second(n))),
            Some(Rate::PerMinute(n)) => builder.call_layer(share(RateLimitLayer::per_minute(n))),
            None => builder,
        }
    }
}

/// `N/s` or `N/min`, N from 1.
fn parse_rate(value: &str) -> Result<Rate, String> {
    let refused = || format!("--rate-limit: {value:?} is not a rate such as 5/s or 100/min");
    let (count, unit) = value.split_once('/').ok_or_else(refused)?;
    let count: NonZeroU32 = count.trim().parse().map_err(|_| refused())?;
    match unit.trim() {
        "s" => Ok(Rate::PerSecond(count)),
        "min" => Ok(Rate::PerMinute(count)),
        _ => Err(refused()),
    }
}

/// A count of calls, from 1.
fn parse_concurrent(value: &str) -> Result<usize, String> {
    match value.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "--max-concurrent-calls: {value:?} is not a number of calls (1 or more)"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_counts_parse_and_refusals_name_the_flag() {
        let five = NonZeroU32::new(5).unwrap();
        let policy = Policy::parse(Some("5/s"), Some("8")).unwrap();
        assert_eq!(policy.rate, Some(Rate::PerSecond(five)));
        assert_eq!(policy.concurrent, Some(8));
        let per_minute = Policy::parse(Some("5/min"), None).unwrap();
        assert_eq!(per_minute.rate, Some(Rate::PerMinute(five)));
        assert_eq!(
            Policy::parse(Some("0/s"), None).unwrap_err(),
            "--rate-limit: \"0/s\" is not a rate such as 5/s or 100/min"
        );
        assert!(Policy::parse(Some("5/h"), None).is_err());
        assert_eq!(
            Policy::parse(None, Some("none")).unwrap_err(),
            "--max-concurrent-calls: \"none\" is not a number of calls (1 or more)"
        );
    }
}
