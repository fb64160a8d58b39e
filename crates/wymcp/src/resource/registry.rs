//! The validated resources and templates of a server, and the `resources/*` handlers.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use iri_string::types::UriStr;
use serde_json::{Map, Value, json};
use wymcp_core::{ConfigurationError, Problem};

use crate::context::Context;
use crate::paging;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::resource::definition::Source;
use crate::resource::read::not_found;
use crate::resource::subscriptions::Subscriptions;
use crate::resource::{Resource, ResourceContents, ResourceTemplate, UriTemplate, Variables};

/// Resources and templates, validated once.
#[derive(Debug, Default)]
pub(crate) struct ResourceRegistry {
    resources: Vec<Resource>,
    by_uri: HashMap<String, usize>,
    templates: Vec<(ResourceTemplate, UriTemplate)>,
    pub(crate) subscriptions: Subscriptions,
}

impl ResourceRegistry {
    /// Validates every URI, template and name; refuses duplicates.
    pub(crate) fn build(
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
    ) -> Result<Self, ConfigurationError> {
        let mut by_uri = HashMap::new();
        for (i, resource) in resources.iter().enumerate() {
            if let Err(e) = UriStr::new(&resource.uri) {
                return Err(ConfigurationError::new(Problem::InvalidResourceUri {
                    uri: resource.uri.clone(),
                    reason: e.to_string(),
                }));
            }
            if resource.meta.name.is_empty() {
                return Err(ConfigurationError::new(Problem::EmptyName(format!(
                    "resource {:?}",
                    resource.uri
                ))));
            }
            if by_uri.insert(resource.uri.clone(), i).is_some() {
                return Err(ConfigurationError::new(Problem::DuplicateResource(
                    resource.uri.clone(),
                )));
            }
        }
        let mut seen = HashSet::new();
        let mut parsed = Vec::with_capacity(templates.len());
        for template in templates {
            let uri_template = UriTemplate::parse(&template.template).map_err(|reason| {
                ConfigurationError::new(Problem::InvalidUriTemplate {
                    template: template.template.clone(),
                    reason,
                })
            })?;
            if template.meta.name.is_empty() {
                return Err(ConfigurationError::new(Problem::EmptyName(format!(
                    "resource template {:?}",
                    template.template
                ))));
            }
            if !seen.insert(template.template.clone()) {
                return Err(ConfigurationError::new(Problem::DuplicateResourceTemplate(
                    template.template.clone(),
                )));
            }
            parsed.push((template, uri_template));
        }
        Ok(ResourceRegistry {
            resources,
            by_uri,
            templates: parsed,
            subscriptions: Subscriptions::default(),
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }

    pub(crate) fn uris(&self) -> Vec<&str> {
        self.resources.iter().map(|r| r.uri.as_str()).collect()
    }

    pub(crate) fn template_uris(&self) -> Vec<&str> {
        self.templates
            .iter()
            .map(|(t, _)| t.template.as_str())
            .collect()
    }

    /// The parsed template declared as `template`.
    pub(crate) fn template(&self, template: &str) -> Option<&UriTemplate> {
        self.templates
            .iter()
            .find(|(t, _)| t.template == template)
            .map(|(_, parsed)| parsed)
    }

    /// Whether `uri` names a resource or matches a template.
    pub(crate) fn resolves(&self, uri: &str) -> bool {
        self.by_uri.contains_key(uri)
            || self
                .templates
                .iter()
                .any(|(_, t)| t.match_uri(uri).is_some())
    }

    pub(crate) fn list(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
        version: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let (page, next) = paging::page(&self.resources, params, page_size, "resources")?;
        let items: Vec<Value> = page.iter().map(|r| r.to_value(version)).collect();
        Ok(with_cursor(json!({ "resources": items }), next))
    }

    pub(crate) fn list_templates(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
        version: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let (page, next) = paging::page(&self.templates, params, page_size, "resources/templates")?;
        let items: Vec<Value> = page.iter().map(|(t, _)| t.to_value(version)).collect();
        Ok(with_cursor(json!({ "resourceTemplates": items }), next))
    }

    /// Reads `uri`: a resource by exact URI first, then the first template it matches.
    pub(crate) async fn read(&self, uri: &str, ctx: Context) -> Result<Value, RpcError> {
        let version = ctx.protocol_version();
        let (reader, vars) = match self.by_uri.get(uri).map(|&i| &self.resources[i]) {
            Some(resource) => match &resource.source {
                Source::Reader(reader) => (reader, Variables::new()),
                Source::Text(_) | Source::Blob(_) => {
                    let contents: Vec<_> = resource.static_contents().into_iter().collect();
                    return Ok(render(&contents, version));
                }
            },
            None => {
                let found = self
                    .templates
                    .iter()
                    .find_map(|(t, parsed)| parsed.match_uri(uri).map(|vars| (&t.reader, vars)));
                match found {
                    Some(found) => found,
                    None => return Err(not_found(&wymcp_core::bound::echo(uri), version)),
                }
            }
        };
        let read = AssertUnwindSafe(reader.read(uri, vars, ctx)).catch_unwind();
        match read.await {
            Ok(Ok(contents)) => Ok(render(&contents, version)),
            Ok(Err(error)) => Err(error.to_rpc_error(uri, version)),
            Err(_) => Err(RpcError::new(
                RpcError::INTERNAL_ERROR,
                format!(
                    "Reading resource {} failed: the reader panicked",
                    wymcp_core::bound::echo(uri)
                ),
                None,
            )),
        }
    }
}

fn render(contents: &[ResourceContents], version: ProtocolVersion) -> Value {
    let with_meta = version.supports_meta();
    let items: Vec<Value> = contents.iter().map(|c| c.render(with_meta)).collect();
    json!({ "contents": items })
}

/// Adds `nextCursor` to a list result when there is a next page.
pub(crate) fn with_cursor(mut result: Value, next: Option<String>) -> Value {
    if let (Some(next), Some(map)) = (next, result.as_object_mut()) {
        map.insert("nextCursor".into(), Value::String(next));
    }
    result
}

/// The `uri` of a request's params, or the `-32602` refusing it.
pub(crate) fn uri_param(params: &Map<String, Value>) -> Result<&str, RpcError> {
    params.get("uri").and_then(Value::as_str).ok_or_else(|| {
        RpcError::invalid_params_reason("Missing or invalid 'uri' in params: expected a string")
    })
}
