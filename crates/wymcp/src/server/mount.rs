//! [`ServerBuilder::mount`](super::ServerBuilder::mount): another built [`Server`] served
//! inside this one. Its tools and prompts are served as `<prefix>_<name>` (as they are with an
//! empty prefix, as the gateway's `expose = "tools"` names an upstream's tools), its resources
//! and templates under their own URIs, its completion providers on the renamed prompts and
//! the same templates. Each tool keeps its own gates: it is validated again under its new name
//! from the same tool (its schemas, scopes and visibility), its admitted calls run through the
//! mounted server's layers, and its task support and call timeout are carried over.
//!
//! A name (or URI) that a mount would serve a second time is refused by `build()`, naming
//! both who serve it.

use std::collections::HashMap;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tower::{BoxError, Layer, Service};
use wymcp_core::{Actions, ConfigurationError, Hint, Problem};

use super::Server;
use crate::completion::registry::PendingCompletion;
use crate::completion::{Complete, Completion, CompletionRef, CompletionRequest, DynComplete};
use crate::context::Context;
use crate::dispatch::AfterGates;
use crate::middleware::{Layers, Operation, Response, Stack, Wrap};
use crate::prompt::definition::DynPrompt;
use crate::prompt::{GetPromptResult, Prompt, PromptArgument, PromptArguments, PromptError};
use crate::resource::{Resource, ResourceTemplate};
use crate::tool::erased::{DynActionTool, DynDescribe, DynPlainTool};
use crate::tool::registered::{Kind, RegisteredTool};
use crate::tool::{ActionError, ActionResult, CallResult, Data};

/// What this server serves itself, before any mount: the names a mount may not take again.
pub(super) struct Own<'a> {
    pub(super) tools: &'a [Arc<RegisteredTool>],
    pub(super) resources: &'a [Resource],
    pub(super) templates: &'a [ResourceTemplate],
    pub(super) prompts: &'a [Arc<dyn DynPrompt>],
}

/// What the mounts add to this server, in the order mounted.
#[derive(Default)]
pub(super) struct Mounted {
    pub(super) tools: Vec<Arc<RegisteredTool>>,
    pub(super) resources: Vec<Resource>,
    pub(super) templates: Vec<ResourceTemplate>,
    pub(super) prompts: Vec<Arc<dyn DynPrompt>>,
    pub(super) completions: Vec<PendingCompletion>,
}

/// Where this server's settings go that follow a mounted tool under its new name.
pub(super) struct Settings<'a> {
    pub(super) layers: &'a mut Layers,
    pub(super) tasks: &'a mut crate::task::Tasks,
    pub(super) limits: &'a mut crate::Limits,
}

/// The name `name` of the server mounted at `prefix` is served as.
pub(super) fn served_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}_{name}")
    }
}

/// Refuses a prefix that would not make tool names (`""` is allowed: names kept).
fn check_prefix(prefix: &str) -> Result<(), ConfigurationError> {
    let valid = prefix
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if valid {
        Ok(())
    } else {
        let echoed = wymcp_core::bound::echo(prefix);
        Err(ConfigurationError::new(Problem::InvalidMountPrefix(echoed)))
    }
}

/// Who serves each name of one kind, to tell both on a collision.
#[derive(Default)]
struct Taken(HashMap<String, String>);

impl Taken {
    /// Records what this server serves itself (its own duplicates are its registries' to
    /// refuse).
    fn own<'a>(names: impl Iterator<Item = &'a str>) -> Self {
        let mut taken = Taken::default();
        for name in names {
            taken.0.insert(name.to_owned(), "this server".to_owned());
        }
        taken
    }

    /// Takes `name` for `by`, or refuses it naming who took it first.
    fn take(
        &mut self,
        what: &'static str,
        name: &str,
        by: String,
    ) -> Result<(), ConfigurationError> {
        if let Some(first) = self.0.get(name) {
            return Err(ConfigurationError::new(Problem::MountCollision {
                item: format!("{what} {name:?}"),
                servers: vec![first.clone(), by],
            }));
        }
        self.0.insert(name.to_owned(), by);
        Ok(())
    }
}

/// Everything the `mounts` serve here, checked against `own` and each other; the mounted
/// tools' layers, task support and call timeouts are added to `settings`.
pub(super) fn mount_all(
    mounts: Vec<(String, Server)>,
    own: &Own<'_>,
    settings: Settings<'_>,
) -> Result<Mounted, ConfigurationError> {
    let mut tools = Taken::own(own.tools.iter().map(|t| t.name.as_str()));
    tools.0.insert(
        crate::tool::registered::HELP.to_owned(),
        "this server".into(),
    );
    let mut prompts = Taken::own(own.prompts.iter().map(|p| p.name()));
    let mut uris = Taken::own(own.resources.iter().map(|r| r.uri.as_str()));
    let mut templates = Taken::own(own.templates.iter().map(|t| t.template.as_str()));
    let Settings {
        layers,
        tasks,
        limits,
    } = settings;
    let mut mounted = Mounted::default();
    for (prefix, server) in mounts {
        check_prefix(&prefix)?;
        let at = format!("the server mounted at {prefix:?}");
        let features = server.features();
        let stack = features.middleware.as_ref();
        for inner in server.registered().iter() {
            let name = served_name(&prefix, &inner.name);
            // Its help is not mounted: this server's help answers for every tool.
            let Some(tool) = renamed_tool(inner, &name)? else {
                continue;
            };
            tools.take("tool", &name, format!("{at} (its tool {:?})", inner.name))?;
            mounted.tools.push(Arc::new(tool));
            if let Some(stack) = stack {
                let through = ThroughMounted {
                    stack: stack.clone(),
                    tool: Arc::clone(inner),
                };
                layers.tools.push((name.clone(), Wrap::new(through)));
            }
            carry_task_settings(&features.tasks, tasks, &inner.name, &name);
            if let Some(&timeout) = server.limits().tool_call_timeouts.get(&inner.name) {
                limits.tool_call_timeouts.entry(name).or_insert(timeout);
            }
        }
        for resource in features.resources.resources() {
            uris.take("resource", &resource.uri, at.clone())?;
            mounted.resources.push(resource);
        }
        for template in features.resources.templates() {
            templates.take("resource template", &template.template, at.clone())?;
            mounted.templates.push(template);
        }
        let mut renamed = HashMap::new();
        for prompt in features.prompts.prompts() {
            let name = served_name(&prefix, prompt.name());
            prompts.take(
                "prompt",
                &name,
                format!("{at} (its prompt {:?})", prompt.name()),
            )?;
            renamed.insert(prompt.name().to_owned(), name.clone());
            mounted.prompts.push(Arc::new(RenamedPrompt {
                name,
                prompt: Arc::clone(&prompt),
            }));
        }
        for (reference, argument, provider) in features.completions.providers() {
            let (reference, provider): (_, Arc<dyn DynComplete>) = match reference {
                CompletionRef::Prompt(inner) => {
                    let served = renamed.get(inner).cloned().unwrap_or_else(|| inner.clone());
                    let provider = RenamedCompletion {
                        name: inner.clone(),
                        provider: Arc::clone(provider),
                    };
                    (CompletionRef::Prompt(served), Arc::new(provider))
                }
                template => (template.clone(), Arc::clone(provider)),
            };
            mounted.completions.push(PendingCompletion {
                reference,
                argument: argument.to_owned(),
                provider,
            });
        }
    }
    Ok(mounted)
}

/// The tool `inner` as `name`: validated again from the same tool (so its gates, help and
/// refusals say `name`), its visibility kept; `None` for the help tool.
fn renamed_tool(
    inner: &RegisteredTool,
    name: &str,
) -> Result<Option<RegisteredTool>, ConfigurationError> {
    let mut tool = match &inner.kind {
        Kind::Action { tool, .. } => RegisteredTool::action(Arc::new(Renamed {
            name: name.to_owned(),
            tool: Arc::clone(tool),
        }))?,
        Kind::Plain { tool, .. } => RegisteredTool::plain(Arc::new(Renamed {
            name: name.to_owned(),
            tool: Arc::clone(tool),
        }))?,
        Kind::Help => return Ok(None),
    };
    tool.visibility = inner.visibility;
    Ok(Some(tool))
}

/// The mounted server's task settings of tool `inner`, set on this server's for `name`.
fn carry_task_settings(
    from: &crate::task::Tasks,
    to: &mut crate::task::Tasks,
    inner: &str,
    name: &str,
) {
    let settings = from.policies().of(inner);
    to.policies_mut().set(name, settings);
}

/// A mounted tool, under its served name.
struct Renamed<T: ?Sized> {
    name: String,
    tool: Arc<T>,
}

macro_rules! describe_renamed {
    ($dyn:ident) => {
        impl DynDescribe for Renamed<dyn $dyn> {
            fn name(&self) -> &str {
                &self.name
            }
            fn description(&self) -> &str {
                self.tool.description()
            }
            fn title(&self) -> Option<String> {
                self.tool.title()
            }
            fn annotations(&self) -> Option<Map<String, Value>> {
                self.tool.annotations()
            }
            fn output_schema(&self) -> Option<Map<String, Value>> {
                self.tool.output_schema()
            }
        }
    };
}

describe_renamed!(DynActionTool);
describe_renamed!(DynPlainTool);

impl DynActionTool for Renamed<dyn DynActionTool> {
    fn actions(&self) -> Actions {
        self.tool.actions()
    }
    fn run_action<'a>(
        &'a self,
        action: &'a str,
        data: Data,
        ctx: Context,
    ) -> crate::tool::erased::BoxFuture<'a, ActionResult> {
        self.tool.run_action(action, data, ctx)
    }
    fn hints(&self, action: &str, hint_context: &Value) -> Vec<Hint> {
        self.tool.hints(action, hint_context)
    }
    fn handle_error(&self, reason: &ActionError) -> String {
        self.tool.handle_error(reason)
    }
    fn action_context(&self, action: &str, ctx: &Context) -> Option<Map<String, Value>> {
        self.tool.action_context(action, ctx)
    }
}

impl DynPlainTool for Renamed<dyn DynPlainTool> {
    fn input_schema(&self) -> Map<String, Value> {
        self.tool.input_schema()
    }
    fn run(
        &self,
        arguments: Map<String, Value>,
        ctx: Context,
    ) -> crate::tool::erased::BoxFuture<'_, CallResult> {
        self.tool.run(arguments, ctx)
    }
    fn scopes(&self) -> Vec<String> {
        self.tool.scopes()
    }
}

/// The layer that sends a mounted tool's admitted calls through the layers of the server it
/// was mounted from (which see the tool by its own name there), in place of this server's
/// handler.
#[derive(Clone)]
struct ThroughMounted {
    stack: Stack,
    /// The tool as the mounted server registered it.
    tool: Arc<RegisteredTool>,
}

impl<S> Layer<S> for ThroughMounted {
    type Service = ThroughMounted;

    fn layer(&self, _handler: S) -> Self::Service {
        self.clone()
    }
}

impl Service<Operation> for ThroughMounted {
    type Response = Response;
    type Error = BoxError;
    type Future = BoxFuture<'static, Result<Response, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, operation: Operation) -> Self::Future {
        let action = operation.action().map(str::to_owned);
        let failed = operation.failed_request();
        let Operation { data, ctx, .. } = operation;
        let call = self
            .stack
            .run(Arc::clone(&self.tool), action.as_deref(), data, ctx);
        Box::pin(async move { Ok(failed.response(call.await)) })
    }
}

/// A mounted prompt, under its served name.
struct RenamedPrompt {
    name: String,
    prompt: Arc<dyn DynPrompt>,
}

impl Prompt for RenamedPrompt {
    fn name(&self) -> &str {
        &self.name
    }
    fn title(&self) -> Option<String> {
        self.prompt.title()
    }
    fn description(&self) -> Option<String> {
        self.prompt.description()
    }
    fn arguments(&self) -> Vec<PromptArgument> {
        self.prompt.arguments()
    }
    fn icons(&self) -> Vec<Value> {
        self.prompt.icons()
    }
    fn scopes(&self) -> Vec<String> {
        self.prompt.scopes()
    }
    async fn get(
        &self,
        arguments: PromptArguments,
        ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        self.prompt.get(arguments, ctx).await
    }
}

/// A mounted prompt's completion provider: asked with the prompt's own name `name`, as when
/// its server is served alone.
struct RenamedCompletion {
    name: String,
    provider: Arc<dyn DynComplete>,
}

impl Complete for RenamedCompletion {
    async fn complete(&self, mut request: CompletionRequest, ctx: Context) -> Completion {
        request.reference = CompletionRef::Prompt(self.name.clone());
        self.provider.complete(request, ctx).await
    }
}
