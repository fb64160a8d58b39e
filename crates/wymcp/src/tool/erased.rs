//! Object-safe forms of the tool traits, so a server holds tools of any type.

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};
use wymcp_core::{Actions, Hint};

use crate::context::Context;
use crate::tool::{ActionError, ActionResult, ActionTool, CallResult, Data, PlainTool};

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The callbacks every tool contributes to its definition.
pub(crate) trait DynDescribe: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn title(&self) -> Option<String>;
    fn annotations(&self) -> Option<Map<String, Value>>;
    fn output_schema(&self) -> Option<Map<String, Value>>;
}

pub(crate) trait DynActionTool: DynDescribe {
    fn actions(&self) -> Actions;
    fn run_action<'a>(
        &'a self,
        action: &'a str,
        data: Data,
        ctx: Context,
    ) -> BoxFuture<'a, ActionResult>;
    fn hints(&self, action: &str, hint_context: &Value) -> Vec<Hint>;
    fn handle_error(&self, reason: &ActionError) -> String;
    fn action_context(&self, action: &str, ctx: &Context) -> Option<Map<String, Value>>;
}

pub(crate) trait DynPlainTool: DynDescribe {
    fn input_schema(&self) -> Map<String, Value>;
    fn run(&self, arguments: Map<String, Value>, ctx: Context) -> BoxFuture<'_, CallResult>;
    fn scopes(&self) -> Vec<String>;
}

/// Adapts an [`ActionTool`].
pub(crate) struct ActionAdapter<T>(pub(crate) T);
/// Adapts a [`PlainTool`].
pub(crate) struct PlainAdapter<T>(pub(crate) T);

macro_rules! describe {
    ($adapter:ident, $trait:ident) => {
        impl<T: $trait> DynDescribe for $adapter<T> {
            fn name(&self) -> &str {
                self.0.name()
            }
            fn description(&self) -> &str {
                self.0.description()
            }
            fn title(&self) -> Option<String> {
                self.0.title()
            }
            fn annotations(&self) -> Option<Map<String, Value>> {
                self.0.annotations()
            }
            fn output_schema(&self) -> Option<Map<String, Value>> {
                self.0.output_schema()
            }
        }
    };
}

describe!(ActionAdapter, ActionTool);
describe!(PlainAdapter, PlainTool);

impl<T: ActionTool> DynActionTool for ActionAdapter<T> {
    fn actions(&self) -> Actions {
        self.0.actions()
    }
    fn run_action<'a>(
        &'a self,
        action: &'a str,
        data: Data,
        ctx: Context,
    ) -> BoxFuture<'a, ActionResult> {
        Box::pin(self.0.run_action(action, data, ctx))
    }
    fn hints(&self, action: &str, hint_context: &Value) -> Vec<Hint> {
        self.0.hints(action, hint_context)
    }
    fn handle_error(&self, reason: &ActionError) -> String {
        self.0.handle_error(reason)
    }
    fn action_context(&self, action: &str, ctx: &Context) -> Option<Map<String, Value>> {
        self.0.action_context(action, ctx)
    }
}

impl<T: PlainTool> DynPlainTool for PlainAdapter<T> {
    fn input_schema(&self) -> Map<String, Value> {
        self.0.input_schema()
    }
    fn run(&self, arguments: Map<String, Value>, ctx: Context) -> BoxFuture<'_, CallResult> {
        Box::pin(self.0.run(arguments, ctx))
    }
    fn scopes(&self) -> Vec<String> {
        self.0.scopes()
    }
}
