//! [`ToolTable`]: a server's configured tools (help last) and their index by name, fixed at
//! `build()` or, for a server built with `ServerBuilder::live_tools`, replaced as a whole
//! while it runs.
//!
//! A fixed table is read in place: a call on a server whose tools never change pays no lock
//! and no reference count for it. A live table is an `Arc` behind a lock held only to clone
//! or swap it; every reader works on the snapshot it took, so a call that started with the
//! old tools finishes with them.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use crate::tool::registered::RegisteredTool;

/// One set of configured tools, help last, and where each name is.
#[derive(Debug)]
pub(crate) struct Tools {
    pub(crate) list: Arc<[Arc<RegisteredTool>]>,
    pub(crate) index: HashMap<String, usize>,
}

impl Tools {
    pub(crate) fn new(list: Vec<Arc<RegisteredTool>>) -> Tools {
        let index = list
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        Tools {
            list: list.into(),
            index,
        }
    }

    /// The tool `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<RegisteredTool>> {
        self.index.get(name).map(|&i| &self.list[i])
    }
}

/// The tools that can change: shared by the server and its live sessions.
pub(crate) type LiveTable = Arc<RwLock<Arc<Tools>>>;

/// A server's configured tools: fixed, or live.
#[derive(Debug)]
pub(crate) enum ToolTable {
    Fixed(Tools),
    Live(LiveTable),
}

impl ToolTable {
    /// The live table's current tools.
    pub(crate) fn load_live(live: &LiveTable) -> Arc<Tools> {
        Arc::clone(&live.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// What a live session reads its configured tools from.
    pub(crate) fn configured(&self) -> Configured {
        match self {
            ToolTable::Fixed(tools) => Configured::Fixed(Arc::clone(&tools.list)),
            ToolTable::Live(live) => Configured::Live(Arc::clone(live)),
        }
    }
}

/// A live session's view of its server's configured tools.
#[derive(Debug, Clone)]
pub(crate) enum Configured {
    Fixed(Arc<[Arc<RegisteredTool>]>),
    Live(LiveTable),
}

impl Configured {
    /// The configured tools now, help last.
    pub(crate) fn list(&self) -> Arc<[Arc<RegisteredTool>]> {
        match self {
            Configured::Fixed(list) => Arc::clone(list),
            Configured::Live(live) => Arc::clone(&ToolTable::load_live(live).list),
        }
    }
}

impl From<Arc<[Arc<RegisteredTool>]>> for Configured {
    fn from(list: Arc<[Arc<RegisteredTool>]>) -> Self {
        Configured::Fixed(list)
    }
}
