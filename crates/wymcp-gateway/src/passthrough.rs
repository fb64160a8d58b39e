//! An upstream's resources, resource templates and prompts, served as the gateway's: each read
//! and each `prompts/get` forwarded to the upstream. URIs are kept; a prompt whose name
//! another upstream took is served as `<upstream>_<name>`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};
use wymcp::prompt::{
    GetPromptResult, PromptArgument, PromptArguments, PromptError, PromptMessage, Role,
};
use wymcp::resource::{ReadResource, ResourceContents, ResourceError, UriTemplate, Variables};
use wymcp::{Content, Context, Prompt, Resource, ResourceTemplate};

use crate::report::Notice;
use crate::upstream::Upstream;

/// Reads forwarded to an upstream.
#[derive(Debug, Clone)]
pub(crate) struct ForwardRead(pub(crate) Arc<Upstream>);

impl ReadResource for ForwardRead {
    async fn read(
        &self,
        uri: &str,
        _vars: Variables,
        ctx: Context,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let result = self
            .0
            .read_resource(uri, &ctx)
            .await
            .map_err(|e| match e.rpc_code() {
                Some(-32002) => ResourceError::NotFound,
                _ => ResourceError::Failed(e.to_string()),
            })?;
        let items = result
            .get("contents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Ok(items.iter().filter_map(contents).collect())
    }

    /// Forwarded upstream (the first downstream subscriber of the URI subscribes there), so
    /// that its `notifications/resources/updated` come to be relayed.
    async fn subscribed(&self, uri: &str, ctx: Context) -> Result<(), ResourceError> {
        self.0
            .subscribe(uri, &ctx)
            .await
            .map_err(|e| match e.rpc_code() {
                Some(-32002) => ResourceError::NotFound,
                _ => ResourceError::Failed(e.to_string()),
            })
    }

    /// Forwarded upstream when the last downstream subscriber left.
    async fn unsubscribed(&self, uri: &str, ctx: Context) {
        self.0.unsubscribe(uri, &ctx).await;
    }
}

/// One item of a `resources/read` result.
fn contents(item: &Value) -> Option<ResourceContents> {
    let uri = item.get("uri")?.as_str()?;
    let mut contents = match (item.get("text"), item.get("blob")) {
        (Some(Value::String(text)), _) => ResourceContents::text(uri, text.clone()),
        (_, Some(Value::String(blob))) => ResourceContents::blob_base64(uri, blob.clone()),
        _ => return None,
    };
    if let Some(mime) = item.get("mimeType").and_then(Value::as_str) {
        contents = contents.with_mime_type(mime);
    }
    if let Some(meta) = item.get("_meta").and_then(Value::as_object) {
        contents = contents.with_meta(meta.clone());
    }
    Some(contents)
}

/// The metadata of a listed resource or template, set on what is served.
macro_rules! described {
    ($served:expr, $listed:expr) => {{
        let mut served = $served;
        let listed = $listed;
        if let Some(title) = listed.get("title").and_then(Value::as_str) {
            served = served.title(title);
        }
        if let Some(description) = listed.get("description").and_then(Value::as_str) {
            served = served.description(description);
        }
        if let Some(mime) = listed.get("mimeType").and_then(Value::as_str) {
            served = served.mime_type(mime);
        }
        served
    }};
}

/// The upstream's resources, as listed, each read forwarded; a URI another upstream serves
/// already is left out with a notice.
pub(crate) fn resources(
    upstream: &Arc<Upstream>,
    listed: &[Value],
    uris: &mut BTreeSet<String>,
    notices: &mut Vec<Notice>,
) -> Vec<Resource> {
    let mut served = Vec::new();
    for item in listed {
        let (Some(uri), Some(name)) = (
            item.get("uri").and_then(Value::as_str),
            item.get("name").and_then(Value::as_str),
        ) else {
            continue;
        };
        if !uris.insert(uri.to_owned()) {
            notices.push(Notice::upstream_only(
                upstream.name(),
                format!("resource {uri}: left out: another upstream serves that URI"),
            ));
            continue;
        }
        let resource = Resource::dynamic(uri, name, ForwardRead(Arc::clone(upstream)));
        served.push(described!(resource, item));
    }
    served
}

/// The upstream's resource templates, each read forwarded; a template wymcp cannot parse
/// (RFC 6570) or one another upstream serves is left out with a notice.
pub(crate) fn templates(
    upstream: &Arc<Upstream>,
    listed: &[Value],
    uris: &mut BTreeSet<String>,
    notices: &mut Vec<Notice>,
) -> Vec<ResourceTemplate> {
    let mut served = Vec::new();
    for item in listed {
        let (Some(template), Some(name)) = (
            item.get("uriTemplate").and_then(Value::as_str),
            item.get("name").and_then(Value::as_str),
        ) else {
            continue;
        };
        if let Err(problem) = UriTemplate::parse(template) {
            notices.push(Notice::upstream_only(
                upstream.name(),
                format!("resource template {template}: left out: {problem}"),
            ));
            continue;
        }
        if !uris.insert(template.to_owned()) {
            notices.push(Notice::upstream_only(
                upstream.name(),
                format!("resource template {template}: left out: another upstream serves it"),
            ));
            continue;
        }
        let served_template =
            ResourceTemplate::new(template, name, ForwardRead(Arc::clone(upstream)));
        served.push(described!(served_template, item));
    }
    served
}

/// A prompt of an upstream, each `prompts/get` forwarded.
#[derive(Debug)]
pub(crate) struct ForwardPrompt {
    name: String,
    upstream_name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    upstream: Arc<Upstream>,
}

#[derive(Deserialize)]
struct ListedArgument {
    name: String,
    #[serde(default)]
    required: bool,
    description: Option<String>,
    title: Option<String>,
}

/// The upstream's prompts; a name another upstream took is served as `<upstream>_<name>`.
pub(crate) fn prompts(
    upstream: &Arc<Upstream>,
    listed: &[Value],
    names: &mut BTreeSet<String>,
    notices: &mut Vec<Notice>,
) -> Vec<ForwardPrompt> {
    let mut served = Vec::new();
    for item in listed {
        let Some(upstream_name) = item.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut name = upstream_name.to_owned();
        if !names.insert(name.clone()) {
            name = format!("{}_{upstream_name}", upstream.name());
            if !names.insert(name.clone()) {
                notices.push(Notice::upstream_only(
                    upstream.name(),
                    format!("prompt {upstream_name}: left out: its name is taken"),
                ));
                continue;
            }
        }
        let arguments = item
            .get("arguments")
            .and_then(Value::as_array)
            .map(|args| {
                args.iter()
                    .filter_map(|a| ListedArgument::deserialize(a).ok())
                    .map(|a| {
                        let mut argument = if a.required {
                            PromptArgument::required(a.name)
                        } else {
                            PromptArgument::optional(a.name)
                        };
                        if let Some(description) = a.description {
                            argument = argument.description(description);
                        }
                        if let Some(title) = a.title {
                            argument = argument.title(title);
                        }
                        argument
                    })
                    .collect()
            })
            .unwrap_or_default();
        let text = |key: &str| item.get(key).and_then(Value::as_str).map(str::to_owned);
        served.push(ForwardPrompt {
            name,
            upstream_name: upstream_name.to_owned(),
            title: text("title"),
            description: text("description"),
            arguments,
            upstream: Arc::clone(upstream),
        });
    }
    served
}

impl ForwardPrompt {
    /// The prompt's name upstream (served as [`Prompt::name`], prefixed on a collision).
    pub(crate) fn upstream_name(&self) -> &str {
        &self.upstream_name
    }
}

impl Prompt for ForwardPrompt {
    fn name(&self) -> &str {
        &self.name
    }

    fn title(&self) -> Option<String> {
        self.title.clone()
    }

    fn description(&self) -> Option<String> {
        self.description.clone()
    }

    fn arguments(&self) -> Vec<PromptArgument> {
        self.arguments.clone()
    }

    async fn get(
        &self,
        arguments: PromptArguments,
        ctx: Context,
    ) -> Result<GetPromptResult, PromptError> {
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let result = self
            .upstream
            .get_prompt(&self.upstream_name, Value::Object(arguments), &ctx)
            .await
            .map_err(|e| match e.rpc_code() {
                Some(-32602) => PromptError::InvalidArguments(e.to_string()),
                _ => PromptError::Failed(e.to_string()),
            })?;
        let messages = result
            .get("messages")
            .and_then(Value::as_array)
            .map(|messages| messages.iter().filter_map(message).collect())
            .unwrap_or_default();
        let mut answer = GetPromptResult::new(messages);
        if let Some(description) = result.get("description").and_then(Value::as_str) {
            answer = answer.description(description);
        }
        Ok(answer)
    }
}

/// One message of a `prompts/get` result; `None` for a role or content this crate does not
/// know.
fn message(item: &Value) -> Option<PromptMessage> {
    let role = match item.get("role")?.as_str()? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        _ => return None,
    };
    let content = Content::deserialize(item.get("content")?).ok()?;
    Some(PromptMessage::new(role, content))
}
