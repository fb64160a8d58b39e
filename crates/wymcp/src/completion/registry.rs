//! The validated completion providers of a server, and the `completion/complete` handler.

use std::collections::{BTreeMap, HashMap};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use serde_json::{Map, Value, json};
use wymcp_core::bound::echo;
use wymcp_core::{ConfigurationError, Problem};

use crate::completion::provider::DynComplete;
use crate::completion::{Completion, CompletionRef, CompletionRequest};
use crate::context::{Context, Identity};
use crate::prompt::registry::{PromptRegistry, unknown_prompt};
use crate::protocol::RpcError;
use crate::resource::registry::ResourceRegistry;

/// A provider as declared on the builder, not yet checked.
pub(crate) struct PendingCompletion {
    pub(crate) reference: CompletionRef,
    pub(crate) argument: String,
    pub(crate) provider: Arc<dyn DynComplete>,
}

type Key = (CompletionRef, String);

/// Providers by (reference, argument), each checked against what it names.
#[derive(Default)]
pub(crate) struct CompletionRegistry {
    providers: Vec<(Key, Arc<dyn DynComplete>)>,
    index: HashMap<String, usize>,
}

impl std::fmt::Debug for CompletionRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.providers.iter().map(|(k, _)| k))
            .finish()
    }
}

fn key_string(reference: &CompletionRef, argument: &str) -> String {
    match reference {
        CompletionRef::Prompt(name) => format!("prompt {name:?}, argument {argument:?}"),
        CompletionRef::ResourceTemplate(t) => {
            format!("resource template {t:?}, variable {argument:?}")
        }
    }
}

impl CompletionRegistry {
    pub(crate) fn build(
        pending: Vec<PendingCompletion>,
        prompts: &PromptRegistry,
        resources: &ResourceRegistry,
    ) -> Result<Self, ConfigurationError> {
        let mut registry = CompletionRegistry::default();
        for p in pending {
            check_names(&p.reference, &p.argument, prompts, resources)
                .map_err(ConfigurationError::new)?;
            let key = key_string(&p.reference, &p.argument);
            if registry.index.contains_key(&key) {
                return Err(ConfigurationError::new(Problem::DuplicateCompletion(key)));
            }
            registry.index.insert(key, registry.providers.len());
            registry
                .providers
                .push(((p.reference, p.argument), p.provider));
        }
        Ok(registry)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// Every provider with the reference and argument it completes, in the order declared.
    pub(crate) fn providers(
        &self,
    ) -> impl Iterator<Item = (&CompletionRef, &str, &Arc<dyn DynComplete>)> {
        self.providers
            .iter()
            .map(|((reference, argument), provider)| (reference, argument.as_str(), provider))
    }

    /// `completion/complete`: the reference and argument checked, then the provider asked (no
    /// provider: no values).
    pub(crate) async fn complete(
        &self,
        params: Map<String, Value>,
        prompts: &PromptRegistry,
        resources: &ResourceRegistry,
        ctx: Context,
    ) -> Result<Value, RpcError> {
        let reference = parse_ref(params.get("ref"))?;
        let argument = params.get("argument").and_then(Value::as_object);
        let (Some(name), Some(value)) = (
            argument.and_then(|a| a.get("name")).and_then(Value::as_str),
            argument
                .and_then(|a| a.get("value"))
                .and_then(Value::as_str),
        ) else {
            return Err(RpcError::invalid_params_reason(
                "Missing or invalid 'argument' in params: expected {\"name\": string, \"value\": string}",
            ));
        };
        let context = parse_context(params.get("context"))?;
        // Completing a prompt's arguments or a template's variables needs its scopes (the
        // values a provider offers come from the data behind it), checked before anything of
        // it is told.
        match &reference {
            CompletionRef::Prompt(prompt) => prompts.check_scopes(prompt, ctx.identity())?,
            CompletionRef::ResourceTemplate(template) => {
                resources.check_template_scopes(template, ctx.identity())?;
            }
        }
        if let Err(problem) = check_names(&reference, name, prompts, resources) {
            return Err(refusal(problem, prompts, resources, ctx.identity()));
        }
        let key = key_string(&reference, name);
        let Some(&i) = self.index.get(&key) else {
            return Ok(json!({ "completion": Completion::empty().to_value() }));
        };
        let request = CompletionRequest {
            reference,
            argument: name.to_owned(),
            value: value.to_owned(),
            context,
        };
        let provider = &self.providers[i].1;
        match AssertUnwindSafe(provider.complete(request, ctx))
            .catch_unwind()
            .await
        {
            Ok(completion) => Ok(json!({ "completion": completion.to_value() })),
            Err(_) => Err(RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!("Completing {key} failed: the provider panicked"),
                None,
            )),
        }
    }
}

/// Whether `reference` exists and declares `argument`.
fn check_names(
    reference: &CompletionRef,
    argument: &str,
    prompts: &PromptRegistry,
    resources: &ResourceRegistry,
) -> Result<(), Problem> {
    match reference {
        CompletionRef::Prompt(name) => {
            let Some(prompt) = prompts.get_registered(name) else {
                return Err(Problem::CompletionUnknownPrompt(name.clone()));
            };
            if !prompt.arguments.iter().any(|a| a.name() == argument) {
                return Err(Problem::CompletionUnknownArgument {
                    prompt: name.clone(),
                    argument: argument.to_owned(),
                });
            }
        }
        CompletionRef::ResourceTemplate(template) => {
            let Some(parsed) = resources.template(template) else {
                return Err(Problem::CompletionUnknownTemplate(template.clone()));
            };
            if !parsed.variables().iter().any(|v| v == argument) {
                return Err(Problem::CompletionUnknownVariable {
                    template: template.clone(),
                    variable: argument.to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// The `-32602` for a request naming what does not exist.
fn refusal(
    problem: Problem,
    prompts: &PromptRegistry,
    resources: &ResourceRegistry,
    identity: Option<&Identity>,
) -> RpcError {
    let invalid =
        |message: String, data: Value| RpcError::new(RpcError::INVALID_PARAMS, message, Some(data));
    match problem {
        Problem::CompletionUnknownPrompt(name) => {
            unknown_prompt(&name, &prompts.names_for(identity))
        }
        Problem::CompletionUnknownArgument { prompt, argument } => {
            let declared: Vec<String> = prompts
                .get_registered(&prompt)
                .map(|p| p.arguments.iter().map(|a| a.name().to_owned()).collect())
                .unwrap_or_default();
            invalid(
                format!(
                    "Unknown argument '{}' for prompt {prompt}. Declared arguments: {}",
                    echo(&argument),
                    declared.join(", ")
                ),
                json!({ "prompt": prompt, "argument": echo(&argument) }),
            )
        }
        Problem::CompletionUnknownVariable { template, variable } => {
            let declared = resources
                .template(&template)
                .map(|t| t.variables().join(", "))
                .unwrap_or_default();
            invalid(
                format!(
                    "Unknown variable '{}' for resource template {template}. Its variables: {declared}",
                    echo(&variable)
                ),
                json!({ "uri": template, "argument": echo(&variable) }),
            )
        }
        other => {
            let uri = match &other {
                Problem::CompletionUnknownTemplate(t) => echo(t),
                _ => String::new(),
            };
            invalid(
                format!(
                    "Unknown resource template: {uri}. 'ref.uri' must be a template as listed by resources/templates/list"
                ),
                json!({ "uri": uri }),
            )
        }
    }
}

fn parse_ref(reference: Option<&Value>) -> Result<CompletionRef, RpcError> {
    let bad = || {
        RpcError::invalid_params_reason(
            "Missing or invalid 'ref' in params: expected {\"type\": \"ref/prompt\", \"name\": ...} or {\"type\": \"ref/resource\", \"uri\": ...}",
        )
    };
    let reference = reference.and_then(Value::as_object).ok_or_else(bad)?;
    let field = |key: &str| {
        reference
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => field("name").map(CompletionRef::Prompt).ok_or_else(bad),
        Some("ref/resource") => field("uri")
            .map(CompletionRef::ResourceTemplate)
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

fn parse_context(context: Option<&Value>) -> Result<BTreeMap<String, String>, RpcError> {
    let bad = || {
        RpcError::invalid_params_reason(
            "Invalid 'context' in params: expected {\"arguments\": {name: string}}",
        )
    };
    let mut out = BTreeMap::new();
    let Some(context) = context else {
        return Ok(out);
    };
    let Some(arguments) = context.as_object().ok_or_else(bad)?.get("arguments") else {
        return Ok(out);
    };
    for (name, value) in arguments.as_object().ok_or_else(bad)? {
        out.insert(name.clone(), value.as_str().ok_or_else(bad)?.to_owned());
    }
    Ok(out)
}
