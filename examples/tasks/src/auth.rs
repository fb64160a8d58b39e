//! `--jwks-url URL --issuer ISS --audience AUD`: the HTTP transport accepts only JWT access
//! tokens of that issuer, for that audience, signed by a key of that JWKS, and serves the
//! matching protected-resource metadata (RFC 9728), so an MCP client can find the
//! authorization server. The tools' actions declare `tasks:read` or `tasks:write`.

use wymcp::transport::http::StreamableHttp;

/// Why `--jwks-url` is refused by a build without the `jwt` feature, and what to run.
#[cfg(not(feature = "jwt"))]
pub(crate) const NEEDS_JWT: &str = "--jwks-url needs the example built with JWT support: \
     cargo run -p wymcp-tasks --features jwt -- --jwks-url URL --issuer ISS --audience AUD";

/// The three flags, given together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AuthSettings {
    /// Where the authorization server publishes its keys.
    pub(crate) jwks_url: String,
    /// The `iss` of the tokens accepted.
    pub(crate) issuer: String,
    /// The `aud` the tokens must name: this server's resource URL (`https://host/mcp`).
    pub(crate) audience: String,
}

impl AuthSettings {
    /// The settings of the flags' values: none given, no auth; some but not all, why not.
    pub(crate) fn from_values(
        jwks_url: Option<&str>,
        issuer: Option<&str>,
        audience: Option<&str>,
    ) -> Result<Option<Self>, String> {
        match (jwks_url, issuer, audience) {
            (None, None, None) => Ok(None),
            (Some(jwks_url), Some(issuer), Some(audience)) => Ok(Some(AuthSettings {
                jwks_url: jwks_url.to_owned(),
                issuer: issuer.to_owned(),
                audience: audience.to_owned(),
            })),
            given => {
                let names = ["--jwks-url", "--issuer", "--audience"];
                let missing: Vec<&str> = [given.0, given.1, given.2]
                    .iter()
                    .zip(names)
                    .filter(|(value, _)| value.is_none())
                    .map(|(_, name)| name)
                    .collect();
                Err(format!(
                    "--jwks-url, --issuer and --audience go together: missing {}",
                    missing.join(", ")
                ))
            }
        }
    }

    /// What protects the HTTP transport: JWT auth, the protected-resource metadata and the
    /// challenge's `resource_metadata` pointing at it; or why the settings cannot.
    #[cfg(feature = "jwt")]
    pub(crate) fn protect(
        &self,
    ) -> Result<impl FnOnce(StreamableHttp) -> StreamableHttp + use<>, String> {
        use serde_json::json;
        use wymcp::transport::http::jwt::JwtAuth;

        let auth = JwtAuth::builder()
            .issuer(&self.issuer)
            .audience(&self.audience)
            .jwks_url(&self.jwks_url)
            .build()
            .map_err(|e| e.to_string())?;
        let metadata = json!({
            "resource": self.audience,
            "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"],
        });
        let challenge = metadata_url(&self.audience);
        Ok(move |http: StreamableHttp| {
            http.auth(auth)
                .protected_resource(metadata)
                .www_authenticate([("resource_metadata", challenge)])
        })
    }

    /// Without the `jwt` feature there is no verifier to protect with: say how to get one.
    #[cfg(not(feature = "jwt"))]
    pub(crate) fn protect(
        &self,
    ) -> Result<impl FnOnce(StreamableHttp) -> StreamableHttp + use<>, String> {
        let _ = (&self.jwks_url, &self.issuer, &self.audience);
        Err::<fn(StreamableHttp) -> StreamableHttp, _>(NEEDS_JWT.to_owned())
    }
}

/// The protected-resource metadata URL of `resource` (RFC 9728 §3.1): the well-known path
/// inserted between the host and the resource's path.
#[cfg(feature = "jwt")]
pub(crate) fn metadata_url(resource: &str) -> String {
    let (scheme, rest) = resource.split_once("://").unwrap_or(("https", resource));
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let path = path.trim_end_matches('/');
    format!("{scheme}://{authority}/.well-known/oauth-protected-resource{path}")
}
