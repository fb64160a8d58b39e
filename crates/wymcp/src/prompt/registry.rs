//! The validated prompts of a server, and the `prompts/*` handlers.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, PoisonError, RwLock};

use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use wymcp_core::bound::echo;
use wymcp_core::{ConfigurationError, Problem};

use crate::context::scope_gate;
use crate::context::{Context, Identity, missing_scopes};
use crate::paging;
use crate::prompt::definition::DynPrompt;
use crate::prompt::{PromptArgument, PromptArguments};
use crate::protocol::{ProtocolVersion, RpcError};
use crate::resource::definition::marked;
use crate::resource::write_named;

/// One prompt, its declaration read once.
pub(crate) struct RegisteredPrompt {
    pub(crate) name: String,
    title: Option<String>,
    description: Option<String>,
    pub(crate) arguments: Vec<PromptArgument>,
    icons: Vec<Value>,
    /// The scopes a caller must hold to see and get it.
    scopes: Vec<String>,
    prompt: Arc<dyn DynPrompt>,
}

impl std::fmt::Debug for RegisteredPrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredPrompt")
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

impl RegisteredPrompt {
    fn to_value(&self, version: ProtocolVersion) -> Value {
        let mut map = Map::new();
        write_named(
            &mut map,
            version,
            &self.name,
            self.title.as_ref(),
            self.description.as_ref(),
        );
        if !self.arguments.is_empty() {
            let args: Vec<Value> = self.arguments.iter().map(|a| a.to_value(version)).collect();
            map.insert("arguments".into(), Value::Array(args));
        }
        if version.supports_icons() && !self.icons.is_empty() {
            map.insert("icons".into(), Value::Array(self.icons.clone()));
        }
        Value::Object(map)
    }
}

/// Prompts in declaration order, validated once; replaced whole by
/// [`replace`](Self::replace) (a live server's change), so that a request in flight keeps the
/// set it started with.
#[derive(Debug, Default)]
pub(crate) struct PromptRegistry {
    current: RwLock<Arc<PromptSet>>,
    /// Whether `prompts/list` shows a caller what it lacks the scopes for, marked (the
    /// server's `Visibility::ShowWithScope`), rather than leave it out.
    show_with_scope: bool,
}

/// One validated set of prompts.
#[derive(Debug, Default)]
struct PromptSet {
    prompts: Vec<Arc<RegisteredPrompt>>,
    index: HashMap<String, usize>,
}

impl PromptSet {
    /// Validates every prompt (name, arguments, scopes); refuses a duplicate name.
    fn build(prompts: Vec<Arc<dyn DynPrompt>>) -> Result<Self, ConfigurationError> {
        let mut registered = Vec::with_capacity(prompts.len());
        let mut index = HashMap::new();
        for prompt in prompts {
            let name = prompt.name().to_owned();
            if name.is_empty() {
                return Err(ConfigurationError::new(Problem::EmptyName(
                    "a prompt".into(),
                )));
            }
            let arguments = prompt.arguments();
            let mut seen = std::collections::HashSet::new();
            for argument in &arguments {
                if argument.name().is_empty() {
                    return Err(ConfigurationError::new(Problem::EmptyName(format!(
                        "an argument of prompt {name:?}"
                    ))));
                }
                if !seen.insert(argument.name()) {
                    return Err(ConfigurationError::new(Problem::DuplicatePromptArgument {
                        prompt: name,
                        argument: argument.name().to_owned(),
                    }));
                }
            }
            let scopes = wymcp_core::validate_scopes(&prompt.scopes()).map_err(|problem| {
                ConfigurationError::new(Problem::FeatureScopesInvalid {
                    of: format!("prompt {name:?}"),
                    reason: problem.to_string(),
                })
            })?;
            if index.insert(name.clone(), registered.len()).is_some() {
                return Err(ConfigurationError::new(Problem::DuplicatePrompt(name)));
            }
            registered.push(Arc::new(RegisteredPrompt {
                name,
                title: prompt.title(),
                description: prompt.description(),
                arguments,
                icons: prompt.icons(),
                scopes,
                prompt,
            }));
        }
        Ok(PromptSet {
            prompts: registered,
            index,
        })
    }

    fn get(&self, name: &str) -> Option<&Arc<RegisteredPrompt>> {
        self.index.get(name).map(|&i| &self.prompts[i])
    }
}

impl PromptRegistry {
    /// Validates every prompt (name, arguments, scopes); `prompts/list` shows what a caller
    /// lacks the scopes for (left out, or marked with `show_with_scope`).
    pub(crate) fn build(
        prompts: Vec<Arc<dyn DynPrompt>>,
        show_with_scope: bool,
    ) -> Result<Self, ConfigurationError> {
        Ok(PromptRegistry {
            current: RwLock::new(Arc::new(PromptSet::build(prompts)?)),
            show_with_scope,
        })
    }

    /// The set served now.
    fn current(&self) -> Arc<PromptSet> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The prompts named `remove` taken out and `add` added (after the others), validated as
    /// [`build`](Self::build) validates them; on a refusal nothing changes. Answers a commit
    /// that swaps the new set in, so that a change of several kinds is checked whole first.
    pub(crate) fn replace(
        &self,
        remove: &[String],
        add: Vec<Arc<dyn DynPrompt>>,
    ) -> Result<impl FnOnce() + '_, ConfigurationError> {
        let kept = self
            .current()
            .prompts
            .iter()
            .filter(|p| !remove.contains(&p.name))
            .map(|p| Arc::clone(&p.prompt))
            .collect::<Vec<_>>();
        let set = Arc::new(PromptSet::build(kept.into_iter().chain(add).collect())?);
        Ok(move || {
            *self.current.write().unwrap_or_else(PoisonError::into_inner) = set;
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.current().prompts.is_empty()
    }

    /// The prompts as declared, in `prompts/list` order.
    pub(crate) fn prompts(&self) -> Vec<Arc<dyn DynPrompt>> {
        let set = self.current();
        set.prompts.iter().map(|p| Arc::clone(&p.prompt)).collect()
    }

    pub(crate) fn names(&self) -> Vec<String> {
        let set = self.current();
        set.prompts.iter().map(|p| p.name.clone()).collect()
    }

    pub(crate) fn get_registered(&self, name: &str) -> Option<Arc<RegisteredPrompt>> {
        self.current().get(name).cloned()
    }

    /// Every scope the prompts declare.
    pub(crate) fn declared_scopes(&self) -> Vec<String> {
        let set = self.current();
        set.prompts.iter().flat_map(|p| p.scopes.clone()).collect()
    }

    /// The names `identity` is shown (every one, under `Visibility::ShowWithScope`).
    pub(crate) fn names_for(&self, identity: Option<&Identity>) -> Vec<String> {
        let set = self.current();
        self.shown(&set, identity)
            .into_iter()
            .map(|(p, _)| p.name.clone())
            .collect()
    }

    /// The prompts of `set` `identity` is shown, each with the scopes it lacks for it.
    fn shown<'a>(
        &self,
        set: &'a PromptSet,
        identity: Option<&Identity>,
    ) -> Vec<(&'a RegisteredPrompt, Vec<&'a str>)> {
        set.prompts
            .iter()
            .map(|p| (&**p, missing_scopes(&p.scopes, identity)))
            .filter(|(_, missing)| missing.is_empty() || self.show_with_scope)
            .collect()
    }

    /// The scope gate of the prompt `name`: passes for an unknown one, which the caller
    /// refuses as unknown.
    pub(crate) fn check_scopes(
        &self,
        name: &str,
        identity: Option<&Identity>,
    ) -> Result<(), RpcError> {
        match self.get_registered(name) {
            Some(prompt) => gate(&prompt, identity),
            None => Ok(()),
        }
    }

    /// `prompts/list` as `identity` sees it: what it lacks the scopes for left out (or
    /// marked, under `Visibility::ShowWithScope`); pages count what it is shown.
    pub(crate) fn list(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
        (version, identity): (ProtocolVersion, Option<&Identity>),
    ) -> Result<Value, RpcError> {
        let kind = ("prompts", "prompts");
        let set = self.current();
        let shown = self.shown(&set, identity);
        paging::listed(&shown, params, page_size, kind, |(p, missing)| {
            let listed = p.to_value(version);
            if missing.is_empty() {
                listed
            } else {
                marked(listed, missing)
            }
        })
    }

    /// `prompts/get`: the name and arguments checked against the declaration, then the prompt
    /// rendered.
    pub(crate) async fn get(
        &self,
        mut params: Map<String, Value>,
        ctx: Context,
    ) -> Result<Value, RpcError> {
        let name = match params.remove("name") {
            Some(Value::String(name)) => name,
            _ => {
                return Err(RpcError::invalid_params_reason(
                    "Missing or invalid 'name' in params: expected a string",
                ));
            }
        };
        let Some(prompt) = self.get_registered(&name) else {
            return Err(unknown_prompt(&name, &self.names_for(ctx.identity())));
        };
        // Before the arguments are read: a caller without the scopes learns nothing of them.
        gate(&prompt, ctx.identity())?;
        let arguments = check_arguments(&prompt, params.remove("arguments"))?;
        let version = ctx.protocol_version();
        let rendered = AssertUnwindSafe(prompt.prompt.get(arguments, ctx))
            .catch_unwind()
            .await;
        match rendered {
            Ok(Ok(result)) => Ok(result.to_value(version)),
            Ok(Err(error)) => Err(error.to_rpc_error(&name)),
            Err(_) => Err(RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("Getting prompt {} failed: the prompt panicked", echo(&name)),
                None,
            )),
        }
    }
}

/// The scope gate of `prompt`.
fn gate(prompt: &RegisteredPrompt, identity: Option<&Identity>) -> Result<(), RpcError> {
    scope_gate::check(
        &prompt.scopes,
        identity,
        &format!("prompt '{}'", prompt.name),
    )
}

pub(crate) fn unknown_prompt(name: &str, known: &[String]) -> RpcError {
    RpcError::new(
        RpcError::INVALID_PARAMS,
        format!(
            "Unknown prompt: {}. Available prompts: {}",
            echo(name),
            list(known)
        ),
        Some(json!({ "prompt": echo(name) })),
    )
}

fn list(names: &[impl AsRef<str>]) -> String {
    if names.is_empty() {
        "(none)".to_owned()
    } else {
        let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
        names.join(", ")
    }
}

/// The arguments, checked: an object of strings, every name declared, every required one there.
fn check_arguments(
    prompt: &RegisteredPrompt,
    arguments: Option<Value>,
) -> Result<PromptArguments, RpcError> {
    read_arguments(prompt, arguments).map_err(|refused| refused.into_error(prompt))
}

/// Why a `prompts/get` request's arguments are refused.
enum Refused {
    NotAnObject,
    Undeclared(String),
    NotAString { name: String, got: Value },
    Missing(String),
}

impl Refused {
    /// The `-32602` naming the prompt in its message and `data`, and the argument when there
    /// is one.
    fn into_error(self, prompt: &RegisteredPrompt) -> RpcError {
        let name = &prompt.name;
        let (message, argument) = match self {
            Refused::NotAnObject => (
                format!("Invalid 'arguments' for prompt {name}: expected an object of strings"),
                None,
            ),
            Refused::Undeclared(key) => {
                let declared: Vec<&str> = prompt.arguments.iter().map(|a| a.name()).collect();
                let message = format!(
                    "Unknown argument '{}' for prompt {name}. Declared arguments: {}",
                    echo(&key),
                    list(&declared)
                );
                (message, Some(key))
            }
            Refused::NotAString { name: key, got } => {
                let got = wymcp_core::bound::echo_value(&got);
                let message =
                    format!("Argument '{key}' for prompt {name} must be a string, got {got}");
                (message, Some(key))
            }
            Refused::Missing(key) => (
                format!("Missing required argument '{key}' for prompt {name}"),
                Some(key),
            ),
        };
        let mut data = json!({ "prompt": prompt.name });
        if let Some(argument) = argument {
            data["argument"] = Value::String(echo(&argument));
        }
        RpcError::new(RpcError::INVALID_PARAMS, message, Some(data))
    }
}

fn read_arguments(
    prompt: &RegisteredPrompt,
    arguments: Option<Value>,
) -> Result<PromptArguments, Refused> {
    let map = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(Refused::NotAnObject),
    };
    let mut out = PromptArguments::new();
    for (key, value) in map {
        if !prompt.arguments.iter().any(|a| a.name() == key) {
            return Err(Refused::Undeclared(key));
        }
        let Value::String(value) = value else {
            return Err(Refused::NotAString {
                name: key,
                got: value,
            });
        };
        out.insert(key, value);
    }
    match prompt
        .arguments
        .iter()
        .find(|a| a.is_required() && !out.contains_key(a.name()))
    {
        Some(missing) => Err(Refused::Missing(missing.name().to_owned())),
        None => Ok(out),
    }
}
