//! `server.json` for the MCP registry (schema 2025-12-11), checked against the registry's
//! rules before it is handed out.

use serde::Serialize;
use serde_json::{Value, json};

use super::document::{identity, to_value};
use super::info::ServerInfo;

/// The `$schema` of the `server.json` documents generated here.
pub const SERVER_JSON_SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The registry's cap on `description`, in characters.
const MAX_DESCRIPTION: usize = 100;
/// The registry's cap on `name`, in characters.
const MAX_NAME: usize = 200;
/// The registry's cap on `version`, in characters.
const MAX_VERSION: usize = 255;

/// Why [`Server::server_json`](crate::Server::server_json) refused: the registry would.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// `name` is not `namespace/server` in reverse-DNS form (one `/`, letters, digits, `.`,
    /// `-`, `_`; 3 to 200 characters).
    #[error(
        "server.json: name {0:?} is not reverse-DNS `namespace/server` (one '/', [A-Za-z0-9.-] before it, [A-Za-z0-9._-] after it, 3 to 200 characters)"
    )]
    Name(String),
    /// No `description` was set; the registry requires one.
    #[error("server.json: a description is required (set it with ServerBuilder::description)")]
    MissingDescription,
    /// `description` is longer than the registry's 100 characters.
    #[error("server.json: description is {0} characters; the registry allows at most 100")]
    DescriptionTooLong(usize),
    /// `version` is empty, longer than 255 characters, or a range (`^1.2`, `~1`, `>=1`,
    /// `1.x`, `*`), which the registry refuses.
    #[error(
        "server.json: version {0:?} is not one exact version (not empty, at most 255 characters, no range such as ^1.2, ~1, >=1, 1.x or *)"
    )]
    Version(String),
    /// Neither a package nor a remote: the registry has nothing to install or connect to.
    #[error("server.json: no package and no remote; give a Package or set ServerBuilder::remote")]
    Empty,
}

/// One installable package of the server (`packages` in `server.json`).
///
/// ```
/// use wymcp::card::Package;
///
/// let package = Package::new("npm", "@example/notes")
///     .version("1.2.0")
///     .runtime_hint("npx");
/// assert_eq!(package.registry_type, "npm");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Package {
    /// The package registry: `npm`, `pypi`, `oci`, `nuget` or `mcpb`.
    #[serde(rename = "registryType")]
    pub registry_type: String,
    /// The registry's base URL, when not the registry type's default.
    #[serde(rename = "registryBaseUrl", skip_serializing_if = "Option::is_none")]
    pub registry_base_url: Option<String>,
    /// The package's name in its registry (for `oci`, the image reference with its tag).
    pub identifier: String,
    /// The package's version (left out for `oci`, whose identifier carries the tag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The command that runs it (`npx`, `uvx`, `docker`, ...).
    #[serde(rename = "runtimeHint", skip_serializing_if = "Option::is_none")]
    pub runtime_hint: Option<String>,
    /// How a client talks to it once it runs: `{"type": "stdio"}` unless set.
    pub transport: Value,
    /// Environment variables it reads (registry `KeyValueInput` objects).
    #[serde(rename = "environmentVariables", skip_serializing_if = "Vec::is_empty")]
    pub environment_variables: Vec<Value>,
}

impl Package {
    /// A package named `identifier` in registry `registry_type`, run over stdio.
    pub fn new(registry_type: impl Into<String>, identifier: impl Into<String>) -> Self {
        Package {
            registry_type: registry_type.into(),
            registry_base_url: None,
            identifier: identifier.into(),
            version: None,
            runtime_hint: None,
            transport: json!({"type": "stdio"}),
            environment_variables: Vec::new(),
        }
    }

    /// An OCI image (`identifier` is the reference with its tag), run over stdio.
    pub fn oci(identifier: impl Into<String>) -> Self {
        Self::new("oci", identifier)
    }

    /// The package's version.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The registry's base URL.
    #[must_use]
    pub fn registry_base_url(mut self, url: impl Into<String>) -> Self {
        self.registry_base_url = Some(url.into());
        self
    }

    /// The command that runs the package.
    #[must_use]
    pub fn runtime_hint(mut self, hint: impl Into<String>) -> Self {
        self.runtime_hint = Some(hint.into());
        self
    }

    /// The transport object (`{"type": "streamable-http", "url": ...}` for a package that
    /// serves HTTP once started).
    #[must_use]
    pub fn transport(mut self, transport: Value) -> Self {
        self.transport = transport;
        self
    }

    /// An environment variable the package reads (a registry `KeyValueInput` object).
    #[must_use]
    pub fn environment_variable(mut self, variable: Value) -> Self {
        self.environment_variables.push(variable);
        self
    }
}

/// `server.json` for `info` with `packages`, or why the registry would refuse it.
pub(crate) fn server_json(info: &ServerInfo, packages: &[Package]) -> Result<Value, RegistryError> {
    check_name(&info.name)?;
    let description = info
        .description
        .as_deref()
        .ok_or(RegistryError::MissingDescription)?;
    let length = description.chars().count();
    if length == 0 {
        return Err(RegistryError::MissingDescription);
    }
    if length > MAX_DESCRIPTION {
        return Err(RegistryError::DescriptionTooLong(length));
    }
    check_version(&info.version)?;
    if packages.is_empty() && info.remotes.is_empty() {
        return Err(RegistryError::Empty);
    }
    let mut doc = identity(info, SERVER_JSON_SCHEMA);
    if !packages.is_empty() {
        doc.insert(
            "packages".into(),
            Value::Array(packages.iter().map(to_value).collect()),
        );
    }
    if !info.remotes.is_empty() {
        // The registry's remote is a transport: type, url, headers (no protocol versions or
        // authentication, which are the card's).
        let remotes = info
            .remotes
            .iter()
            .map(|remote| {
                let mut r = json!({"type": remote.kind, "url": remote.url});
                if !remote.headers.is_empty() {
                    r["headers"] = Value::Array(remote.headers.clone());
                }
                r
            })
            .collect();
        doc.insert("remotes".into(), Value::Array(remotes));
    }
    Ok(Value::Object(doc))
}

fn check_name(name: &str) -> Result<(), RegistryError> {
    let refuse = || RegistryError::Name(name.to_owned());
    let length = name.chars().count();
    if !(3..=MAX_NAME).contains(&length) {
        return Err(refuse());
    }
    let (namespace, server) = name.split_once('/').ok_or_else(refuse)?;
    let namespace_ok = !namespace.is_empty()
        && namespace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let server_ok = !server.is_empty()
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if namespace_ok && server_ok {
        Ok(())
    } else {
        Err(refuse())
    }
}

fn check_version(version: &str) -> Result<(), RegistryError> {
    let range = version.is_empty()
        || version.chars().count() > MAX_VERSION
        || version == "latest"
        || version
            .chars()
            .any(|c| matches!(c, '^' | '~' | '>' | '<' | '=' | '*' | ' ' | '|'))
        || version
            .split('.')
            .any(|part| part.eq_ignore_ascii_case("x"));
    if range {
        Err(RegistryError::Version(version.to_owned()))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, description: Option<&str>, version: &str) -> ServerInfo {
        let mut info = crate::Server::builder()
            .build()
            .expect("builds")
            .info()
            .clone();
        info.name = name.into();
        info.description = description.map(Into::into);
        info.version = version.into();
        info
    }

    #[test]
    fn refuses_what_the_registry_refuses() {
        let oci = [Package::oci("ghcr.io/example/notes:1.0.0")];
        let cases = [
            (
                info("notes", Some("d"), "1.0.0"),
                RegistryError::Name("notes".into()),
            ),
            (
                info("a/b/c", Some("d"), "1.0.0"),
                RegistryError::Name("a/b/c".into()),
            ),
            (
                info("io.x/notes", None, "1.0.0"),
                RegistryError::MissingDescription,
            ),
            (
                info("io.x/notes", Some(&"d".repeat(101)), "1.0.0"),
                RegistryError::DescriptionTooLong(101),
            ),
            (
                info("io.x/notes", Some("d"), "^1.0"),
                RegistryError::Version("^1.0".into()),
            ),
            (
                info("io.x/notes", Some("d"), "1.x"),
                RegistryError::Version("1.x".into()),
            ),
        ];
        for (info, expected) in cases {
            assert_eq!(server_json(&info, &oci), Err(expected));
        }
        assert_eq!(
            server_json(&info("io.x/notes", Some("d"), "1.0.0"), &[]),
            Err(RegistryError::Empty)
        );
        assert_eq!(
            RegistryError::DescriptionTooLong(101).to_string(),
            "server.json: description is 101 characters; the registry allows at most 100"
        );
    }

    #[test]
    fn writes_the_registry_shape() {
        let doc = server_json(
            &info("io.github.x/notes", Some("Notes"), "1.0.0-beta.1"),
            &[Package::new("npm", "@x/notes").version("1.0.0-beta.1")],
        )
        .expect("valid");
        assert_eq!(
            doc,
            json!({
                "$schema": SERVER_JSON_SCHEMA,
                "name": "io.github.x/notes",
                "version": "1.0.0-beta.1",
                "description": "Notes",
                "packages": [{"registryType": "npm", "identifier": "@x/notes",
                              "version": "1.0.0-beta.1", "transport": {"type": "stdio"}}]
            })
        );
    }
}
