//! [`Notice`]: what the gateway's start-up reports about an upstream tool it could not serve
//! as the upstream describes it, or an upstream it could not start.

use std::fmt;

/// One line of the start-up report: an upstream (and, where it is about one, a tool) and
/// what the gateway did.
///
/// ```
/// # use wymcp_gateway::Notice;
/// # fn show(notice: &Notice) {
/// eprintln!("{notice}"); // upstream files: tool edit_file: input schema refused (...): ...
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    upstream: String,
    tool: Option<String>,
    what: String,
}

impl Notice {
    pub(crate) fn new(upstream: &str, tool: &str, what: String) -> Self {
        Notice {
            upstream: upstream.to_owned(),
            tool: Some(tool.to_owned()),
            what,
        }
    }

    pub(crate) fn upstream_only(upstream: &str, what: String) -> Self {
        Notice {
            upstream: upstream.to_owned(),
            tool: None,
            what,
        }
    }

    /// The upstream's name.
    pub fn upstream(&self) -> &str {
        &self.upstream
    }

    /// The upstream tool, when the notice is about one.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// What happened.
    pub fn what(&self) -> &str {
        &self.what
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.tool {
            Some(tool) => write!(f, "upstream {}: tool {tool}: {}", self.upstream, self.what),
            None => write!(f, "upstream {}: {}", self.upstream, self.what),
        }
    }
}
