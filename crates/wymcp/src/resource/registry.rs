//! The validated resources and templates of a server, and the `resources/*` handlers.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use iri_string::types::UriStr;
use serde_json::{Map, Value, json};
use wymcp_core::{ConfigurationError, Problem};

use crate::Limits;
use crate::context::Context;
use crate::paging;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::resource::definition::Source;
use crate::resource::read::{not_found, not_found_because};
use crate::resource::subscriptions::Subscriptions;
use crate::resource::{
    MatchError, Resource, ResourceContents, ResourceTemplate, SubscriptionStore, UriTemplate,
    Variables,
};

/// Resources and templates, validated once.
#[derive(Debug, Default)]
pub(crate) struct ResourceRegistry {
    resources: Vec<Resource>,
    by_uri: HashMap<String, usize>,
    templates: Vec<(ResourceTemplate, UriTemplate)>,
    /// [`Limits::max_template_uri`] and [`Limits::max_template_match_steps`].
    match_bounds: (usize, usize),
    pub(crate) subscriptions: Subscriptions,
}

impl ResourceRegistry {
    /// Validates every URI, template and name; refuses duplicates. Templates are matched
    /// within the bounds of `limits`; the subscriptions of sessions with ids are kept in
    /// `shared` when given.
    pub(crate) fn build(
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
        limits: &Limits,
        shared: Option<Arc<dyn SubscriptionStore>>,
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
            match_bounds: (limits.max_template_uri, limits.max_template_match_steps),
            subscriptions: Subscriptions::new(shared),
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
        self.by_uri.contains_key(uri) || self.matching_template(uri).is_ok()
    }

    /// Whether `uri` names a resource or matches a template; when not, the refusal of a
    /// session of `version` (naming the limit a template match ran into, if one did).
    pub(crate) fn check_resolves(
        &self,
        uri: &str,
        version: ProtocolVersion,
    ) -> Result<(), RpcError> {
        if self.by_uri.contains_key(uri) {
            return Ok(());
        }
        self.matching_template(uri)
            .map(|_| ())
            .map_err(|why| not_matched(uri, why, version))
    }

    /// The first template `uri` matches, with its variables; else why none did (a limit that
    /// stopped some template's match is told before a plain no-match).
    fn matching_template(&self, uri: &str) -> Result<(&ResourceTemplate, Variables), MatchError> {
        let (max_len, max_steps) = self.match_bounds;
        let mut why = MatchError::NoMatch;
        for (template, parsed) in &self.templates {
            match parsed.try_match_within(uri, max_len, max_steps) {
                Ok(vars) => return Ok((template, vars)),
                Err(MatchError::NoMatch) => {}
                Err(limit) => why = limit,
            }
        }
        Err(why)
    }

    pub(crate) fn list(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
        version: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let kind = ("resources", "resources");
        paging::listed(&self.resources, params, page_size, kind, |r| {
            r.to_value(version)
        })
    }

    pub(crate) fn list_templates(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
        version: ProtocolVersion,
    ) -> Result<Value, RpcError> {
        let kind = ("resources/templates", "resourceTemplates");
        paging::listed(&self.templates, params, page_size, kind, |(t, _)| {
            t.to_value(version)
        })
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
            None => match self.matching_template(uri) {
                Ok((template, vars)) => (&template.reader, vars),
                Err(why) => return Err(not_matched(uri, why, version)),
            },
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

/// `Resource not found` for `uri` (quoted bounded), naming the limit that stopped a template
/// match when one did.
fn not_matched(uri: &str, why: MatchError, version: ProtocolVersion) -> RpcError {
    let uri = wymcp_core::bound::echo(uri);
    let limit = match why {
        MatchError::TooLong { max } => format!(
            "the URI is longer than {max} bytes, the most matched against a resource template \
             (Limits::max_template_uri)"
        ),
        MatchError::OutOfSteps { max } => format!(
            "matching it against a resource template took more than {max} steps \
             (Limits::max_template_match_steps)"
        ),
        _ => return not_found(&uri, version),
    };
    not_found_because(&uri, &limit, version)
}

fn render(contents: &[ResourceContents], version: ProtocolVersion) -> Value {
    let with_meta = version.supports_meta();
    let items: Vec<Value> = contents.iter().map(|c| c.render(with_meta)).collect();
    json!({ "contents": items })
}

/// The `uri` of a request's params, or the `-32602` refusing it.
pub(crate) fn uri_param(params: &Map<String, Value>) -> Result<&str, RpcError> {
    params.get("uri").and_then(Value::as_str).ok_or_else(|| {
        RpcError::invalid_params_reason("Missing or invalid 'uri' in params: expected a string")
    })
}
