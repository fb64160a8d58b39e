//! The validated resources and templates of a server, and the `resources/*` handlers.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, PoisonError, RwLock};

use futures_util::FutureExt;
use iri_string::types::UriStr;
use serde_json::{Map, Value, json};
use wymcp_core::{ConfigurationError, Problem};

use crate::Limits;
use crate::context::scope_gate;
use crate::context::{Context, Identity, missing_scopes};
use crate::paging;
use crate::protocol::{ProtocolVersion, RpcError};
use crate::resource::definition::Source;
use crate::resource::definition::marked;
use crate::resource::read::{not_found, not_found_because};
use crate::resource::subscriptions::Subscriptions;
use crate::resource::{
    MatchError, Resource, ResourceContents, ResourceTemplate, SubscriptionStore, UriTemplate,
    Variables,
};

/// Resources and templates, validated once; replaced whole by [`replace`](Self::replace) (a
/// live server's change), so that a request in flight keeps the set it started with. The
/// subscriptions outlive a change.
#[derive(Debug, Default)]
pub(crate) struct ResourceRegistry {
    current: RwLock<Arc<ResourceSet>>,
    /// [`Limits::max_template_uri`] and [`Limits::max_template_match_steps`].
    match_bounds: (usize, usize),
    /// Whether the lists show a caller what it lacks the scopes for, marked (the server's
    /// `Visibility::ShowWithScope`), rather than leave it out.
    show_with_scope: bool,
    pub(crate) subscriptions: Subscriptions,
}

/// One validated set of resources and templates.
#[derive(Debug, Default)]
struct ResourceSet {
    resources: Vec<Resource>,
    by_uri: HashMap<String, usize>,
    templates: Vec<(ResourceTemplate, UriTemplate)>,
}

impl ResourceSet {
    /// Validates every URI, template, name and scope; refuses duplicates.
    fn build(
        mut resources: Vec<Resource>,
        mut templates: Vec<ResourceTemplate>,
    ) -> Result<Self, ConfigurationError> {
        for resource in &mut resources {
            resource.meta.scopes = valid_scopes(&resource.meta.scopes, "resource", &resource.uri)?;
        }
        for template in &mut templates {
            let scopes = &template.meta.scopes;
            template.meta.scopes = valid_scopes(scopes, "resource template", &template.template)?;
        }
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
        Ok(ResourceSet {
            resources,
            by_uri,
            templates: parsed,
        })
    }

    fn resource(&self, uri: &str) -> Option<&Resource> {
        self.by_uri.get(uri).map(|&i| &self.resources[i])
    }

    /// The first template `uri` matches, with its variables (within `(max_len,
    /// max_steps)`); else why none did (a limit that stopped some template's match is told
    /// before a plain no-match).
    fn matching_template(
        &self,
        uri: &str,
        (max_len, max_steps): (usize, usize),
    ) -> Result<(&ResourceTemplate, Variables), MatchError> {
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
}

impl ResourceRegistry {
    /// Validates every URI, template, name and scope; refuses duplicates. Templates are
    /// matched within the bounds of `limits`; the subscriptions of sessions with ids are kept
    /// in `shared` when given; the lists show what a caller lacks the scopes for as
    /// `show_with_scope` says.
    pub(crate) fn build(
        resources: Vec<Resource>,
        templates: Vec<ResourceTemplate>,
        (limits, show_with_scope): (&Limits, bool),
        shared: Option<Arc<dyn SubscriptionStore>>,
    ) -> Result<Self, ConfigurationError> {
        Ok(ResourceRegistry {
            current: RwLock::new(Arc::new(ResourceSet::build(resources, templates)?)),
            match_bounds: (limits.max_template_uri, limits.max_template_match_steps),
            show_with_scope,
            subscriptions: Subscriptions::new(shared),
        })
    }

    /// The set served now.
    fn current(&self) -> Arc<ResourceSet> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The resources of the URIs `remove` and the templates `remove_templates` taken out,
    /// `add` and `add_templates` added (after the others), validated as
    /// [`build`](Self::build) validates them; on a refusal nothing changes. Answers a commit
    /// that swaps the new set in, so that a change of several kinds is checked whole first.
    pub(crate) fn replace(
        &self,
        (remove, add): (&[String], Vec<Resource>),
        (remove_templates, add_templates): (&[String], Vec<ResourceTemplate>),
    ) -> Result<impl FnOnce() + '_, ConfigurationError> {
        let current = self.current();
        let resources = current
            .resources
            .iter()
            .filter(|r| !remove.contains(&r.uri))
            .cloned()
            .chain(add)
            .collect();
        let templates = current
            .templates
            .iter()
            .map(|(t, _)| t)
            .filter(|t| !remove_templates.contains(&t.template))
            .cloned()
            .chain(add_templates)
            .collect();
        let set = Arc::new(ResourceSet::build(resources, templates)?);
        Ok(move || {
            *self.current.write().unwrap_or_else(PoisonError::into_inner) = set;
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        let set = self.current();
        set.resources.is_empty() && set.templates.is_empty()
    }

    /// The resources as declared (scopes validated), in `resources/list` order.
    pub(crate) fn resources(&self) -> Vec<Resource> {
        self.current().resources.clone()
    }

    /// The templates as declared (scopes validated), in `resources/templates/list` order.
    pub(crate) fn templates(&self) -> Vec<ResourceTemplate> {
        let set = self.current();
        set.templates.iter().map(|(t, _)| t.clone()).collect()
    }

    pub(crate) fn uris(&self) -> Vec<String> {
        let set = self.current();
        set.resources.iter().map(|r| r.uri.clone()).collect()
    }

    pub(crate) fn template_uris(&self) -> Vec<String> {
        let set = self.current();
        set.templates
            .iter()
            .map(|(t, _)| t.template.clone())
            .collect()
    }

    /// The parsed template declared as `template`.
    pub(crate) fn template(&self, template: &str) -> Option<UriTemplate> {
        let set = self.current();
        set.templates
            .iter()
            .find(|(t, _)| t.template == template)
            .map(|(_, parsed)| parsed.clone())
    }

    /// Every scope the resources and templates declare.
    pub(crate) fn declared_scopes(&self) -> Vec<String> {
        let set = self.current();
        let resources = set.resources.iter().flat_map(|r| r.meta.scopes.clone());
        let templates = set
            .templates
            .iter()
            .flat_map(|(t, _)| t.meta.scopes.clone());
        resources.chain(templates).collect()
    }

    /// The scope gate of the template declared as `template` (completing its variables):
    /// passes for an unknown one, which the caller refuses as unknown.
    pub(crate) fn check_template_scopes(
        &self,
        template: &str,
        identity: Option<&Identity>,
    ) -> Result<(), RpcError> {
        let set = self.current();
        match set.templates.iter().find(|(t, _)| t.template == template) {
            Some((t, _)) => template_gate(t, identity),
            None => Ok(()),
        }
    }

    /// Whether `uri` names a resource or matches a template.
    pub(crate) fn resolves(&self, uri: &str) -> bool {
        let set = self.current();
        set.by_uri.contains_key(uri) || set.matching_template(uri, self.match_bounds).is_ok()
    }

    /// Whether `uri` names a resource or matches a template whose scopes `identity` holds;
    /// when it resolves to nothing, the refusal of a session of `version` (naming the limit a
    /// template match ran into, if one did), and when `identity` lacks a scope, the scope
    /// gate's.
    pub(crate) fn check_resolves(
        &self,
        uri: &str,
        version: ProtocolVersion,
        identity: Option<&Identity>,
    ) -> Result<(), RpcError> {
        let set = self.current();
        if let Some(resource) = set.resource(uri) {
            return resource_gate(resource, identity);
        }
        match set.matching_template(uri, self.match_bounds) {
            Ok((template, _)) => template_gate(template, identity),
            Err(why) => Err(not_matched(uri, why, version)),
        }
    }

    /// `resources/list` as `identity` sees it: what it lacks the scopes for left out (or
    /// marked, under `Visibility::ShowWithScope`); pages count what it is shown.
    pub(crate) fn list(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
        (version, identity): (ProtocolVersion, Option<&Identity>),
    ) -> Result<Value, RpcError> {
        let kind = ("resources", "resources");
        let set = self.current();
        let shown = self.shown(&set.resources, |r| &r.meta.scopes, identity);
        paging::listed(&shown, params, page_size, kind, |(r, missing)| {
            self.listed(r.to_value(version), missing)
        })
    }

    /// `resources/templates/list` as `identity` sees it (as [`list`](Self::list)).
    pub(crate) fn list_templates(
        &self,
        params: &Map<String, Value>,
        page_size: usize,
        (version, identity): (ProtocolVersion, Option<&Identity>),
    ) -> Result<Value, RpcError> {
        let kind = ("resources/templates", "resourceTemplates");
        let set = self.current();
        let shown = self.shown(&set.templates, |(t, _)| &t.meta.scopes, identity);
        paging::listed(&shown, params, page_size, kind, |((t, _), missing)| {
            self.listed(t.to_value(version), missing)
        })
    }

    /// The items of `all` `identity` is shown, each with the scopes it lacks for it.
    fn shown<'a, T>(
        &self,
        all: &'a [T],
        scopes: impl Fn(&'a T) -> &'a Vec<String>,
        identity: Option<&Identity>,
    ) -> Vec<(&'a T, Vec<&'a str>)> {
        all.iter()
            .map(|item| (item, missing_scopes(scopes(item), identity)))
            .filter(|(_, missing)| missing.is_empty() || self.show_with_scope)
            .collect()
    }

    /// A listed object, marked with the scopes the caller lacks for it (if any).
    fn listed(&self, listed: Value, missing: &[&str]) -> Value {
        if missing.is_empty() {
            listed
        } else {
            marked(listed, missing)
        }
    }

    /// The reader `uri` resolves to (a dynamic resource's, else the first matching
    /// template's); `None` for a static resource or no match.
    pub(crate) fn reader_of(&self, uri: &str) -> Option<crate::resource::read::Reader> {
        let set = self.current();
        match set.resource(uri) {
            Some(resource) => match &resource.source {
                Source::Reader(reader) => Some(Arc::clone(reader)),
                Source::Text(_) | Source::Blob(_) => None,
            },
            None => set
                .matching_template(uri, self.match_bounds)
                .ok()
                .map(|(t, _)| Arc::clone(&t.reader)),
        }
    }

    /// Reads `uri`: a resource by exact URI first, then the first template it matches; a
    /// caller lacking their scopes is refused before anything is read.
    pub(crate) async fn read(&self, uri: &str, ctx: Context) -> Result<Value, RpcError> {
        let version = ctx.protocol_version();
        let identity = ctx.identity();
        let set = self.current();
        let (reader, vars) = match set.resource(uri) {
            Some(resource) => match &resource.source {
                _ if let Err(refused) = resource_gate(resource, identity) => return Err(refused),
                Source::Reader(reader) => (reader, Variables::new()),
                Source::Text(_) | Source::Blob(_) => {
                    let contents: Vec<_> = resource.static_contents().into_iter().collect();
                    return Ok(render(&contents, version));
                }
            },
            None => match set.matching_template(uri, self.match_bounds) {
                Ok((template, vars)) => {
                    template_gate(template, identity)?;
                    (&template.reader, vars)
                }
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

/// `scopes` of the resource or template `what` named `name`, checked as scope tokens.
fn valid_scopes(
    scopes: &[String],
    what: &str,
    name: &str,
) -> Result<Vec<String>, ConfigurationError> {
    wymcp_core::validate_scopes(scopes).map_err(|problem| {
        ConfigurationError::new(Problem::FeatureScopesInvalid {
            of: format!("{what} {name:?}"),
            reason: problem.to_string(),
        })
    })
}

/// The scope gate of a resource (by its URI, which the server declared).
fn resource_gate(resource: &Resource, identity: Option<&Identity>) -> Result<(), RpcError> {
    let subject = format!("resource '{}'", resource.uri);
    scope_gate::check(&resource.meta.scopes, identity, &subject)
}

/// The scope gate of a template (by its declared template, not the URI the caller sent).
fn template_gate(template: &ResourceTemplate, identity: Option<&Identity>) -> Result<(), RpcError> {
    let subject = format!("resource template '{}'", template.template);
    scope_gate::check(&template.meta.scopes, identity, &subject)
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
