//! [`TaskPolicies`]: which of a server's tools run as tasks, and how, by tool name; the one
//! place a tool's task settings are kept, whether given at build or with a tool added while
//! the server runs ([`ToolTasks`], the task part of a `ToolPolicy`).

use std::collections::HashMap;

use super::{TaskResume, TaskStart, TaskSupport};

/// One tool's task settings, as its `ToolPolicy` gives them.
#[derive(Debug, Clone, Default)]
pub(crate) struct ToolTasks {
    pub(crate) support: Option<TaskSupport>,
    /// Task support of single actions, over the tool's own.
    pub(crate) actions: Vec<(String, TaskSupport)>,
    pub(crate) start: Option<TaskStart>,
    pub(crate) resume: Option<TaskResume>,
}

/// The task settings of every tool of a server, by name.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskPolicies {
    support: HashMap<String, TaskSupport>,
    /// Task support of single actions of action tools, by (tool, action): over the tool's.
    action_support: HashMap<(String, String), TaskSupport>,
    start: HashMap<String, TaskStart>,
    /// The tools whose orphaned tasks are run again ([`TaskResume::Rerun`]).
    resume: HashMap<String, TaskResume>,
}

impl TaskPolicies {
    /// Sets what `tasks` gives for tool `tool`, over what it had (the builder's `*_with`).
    pub(crate) fn set(&mut self, tool: &str, tasks: ToolTasks) {
        if let Some(support) = tasks.support {
            self.support.insert(tool.to_owned(), support);
        }
        for (action, support) in tasks.actions {
            self.action_support
                .insert((tool.to_owned(), action), support);
        }
        if let Some(start) = tasks.start {
            self.start.insert(tool.to_owned(), start);
        }
        if let Some(resume) = tasks.resume {
            self.resume.insert(tool.to_owned(), resume);
        }
    }

    /// Makes `tasks` the whole of tool `tool`'s settings (a tool added while the server runs
    /// with its policy): what the name had before is dropped.
    pub(crate) fn replace(&mut self, tool: &str, tasks: ToolTasks) {
        self.support.remove(tool);
        self.action_support.retain(|(name, _), _| name != tool);
        self.start.remove(tool);
        self.resume.remove(tool);
        self.set(tool, tasks);
    }

    /// Tool `inner`'s settings, as this server's tool `name` has them (a mounted server's).
    pub(crate) fn of(&self, inner: &str) -> ToolTasks {
        ToolTasks {
            support: self.support.get(inner).copied(),
            actions: self
                .action_support
                .iter()
                .filter(|((tool, _), _)| tool == inner)
                .map(|((_, action), support)| (action.clone(), *support))
                .collect(),
            start: self.start.get(inner).copied(),
            resume: self.resume.get(inner).copied(),
        }
    }

    /// Every tool named, and every (tool, action) given a task support of its own.
    pub(crate) fn named(&self) -> (Vec<&String>, Vec<&(String, String)>) {
        let tools = self
            .support
            .keys()
            .chain(self.start.keys())
            .chain(self.resume.keys())
            .collect();
        (tools, self.action_support.keys().collect())
    }

    /// Whether any tool runs as a task (the server then declares the extension).
    pub(crate) fn is_enabled(&self) -> bool {
        self.support
            .values()
            .chain(self.action_support.values())
            .any(|s| *s != TaskSupport::Forbidden)
    }

    /// The task support of a call of `tool` (of `action`, for an action tool): the action's
    /// own when set, else the tool's.
    pub(crate) fn support_of(&self, tool: &str, action: Option<&str>) -> TaskSupport {
        let own = action.and_then(|action| {
            self.action_support
                .get(&(tool.to_owned(), action.to_owned()))
                .copied()
        });
        own.or_else(|| self.support.get(tool).copied())
            .unwrap_or_default()
    }

    /// Whether no tool or action supports tasks (the stateless `tools/call` then skips routing).
    pub(crate) fn is_empty(&self) -> bool {
        self.support.is_empty() && self.action_support.is_empty()
    }

    pub(crate) fn resume_of(&self, tool: &str) -> TaskResume {
        self.resume.get(tool).copied().unwrap_or_default()
    }

    pub(crate) fn start_of(&self, tool: &str) -> TaskStart {
        self.start.get(tool).copied().unwrap_or_default()
    }
}
