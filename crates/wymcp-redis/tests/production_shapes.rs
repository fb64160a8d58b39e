//! Redis as production runs it, against a real `redis-server` the test starts: TLS
//! (`rediss://`, the server's certificate signed by an authority the test makes with `rcgen`)
//! with a password; a password on a plain port; and Redis Cluster, refused at connect naming
//! what is supported.

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use std::path::Path;
use std::time::Duration;

use wymcp::backend::SessionStore as _;
use wymcp_redis::Redis;

use support::redis_server::RedisServer;

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Writes an authority (`ca.crt`) and a certificate for 127.0.0.1 it signed (`redis.crt`,
/// `redis.key`) into `dir`; answers the authority's PEM.
fn certificates(dir: &Path) -> String {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "wymcp test authority");
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
    let cert = params.signed_by(&key, &ca, &ca_key).unwrap();
    std::fs::write(dir.join("ca.crt"), ca.pem()).unwrap();
    std::fs::write(dir.join("redis.crt"), cert.pem()).unwrap();
    std::fs::write(dir.join("redis.key"), key.serialize_pem()).unwrap();
    ca.pem()
}

/// What a node does first on its store: the shared requestState key, a session written and
/// read back.
async fn works(redis: &Redis) {
    redis.request_state_keys().await.unwrap();
    let sessions = redis.session_store();
    let ttl = Duration::from_secs(60);
    sessions
        .create(support::record("s1"), 100, ttl)
        .await
        .unwrap();
    let kept = sessions.load("s1", ttl).await.unwrap().unwrap();
    assert_eq!(kept.id, "s1");
}

#[tokio::test]
async fn rediss_with_a_password_and_a_private_authority() {
    let tls_port = free_port();
    let mut ca = String::new();
    let Some(server) = RedisServer::start_with_files(|dir| {
        ca = certificates(dir);
        let file = |name: &str| dir.join(name).display().to_string();
        vec![
            "--tls-port".into(),
            tls_port.to_string(),
            "--tls-cert-file".into(),
            file("redis.crt"),
            "--tls-key-file".into(),
            file("redis.key"),
            "--tls-ca-cert-file".into(),
            file("ca.crt"),
            "--tls-auth-clients".into(),
            "no".into(),
            "--requirepass".into(),
            "s3cret".into(),
        ]
    }) else {
        return;
    };
    let tls = format!("rediss://:s3cret@127.0.0.1:{tls_port}/");
    let redis = Redis::builder(&tls)
        .tls_root_certificate(ca.clone())
        .connect()
        .await
        .unwrap();
    works(&redis).await;

    // The system's roots do not know the test's authority: refused, not connected in clear.
    let unknown = Redis::connect(&tls).await.unwrap_err();
    assert!(unknown.to_string().contains("UnknownIssuer"), "{unknown}");
    // A wrong password or none is refused at connect, not at the first request.
    let wrong = Redis::builder(&format!("rediss://:nope@127.0.0.1:{tls_port}/"))
        .tls_root_certificate(ca)
        .connect()
        .await
        .unwrap_err();
    assert_eq!(
        wrong.to_string(),
        "Password authentication failed - AuthenticationFailed"
    );
    let plain = format!("redis://127.0.0.1:{}/", server.port());
    let none = Redis::connect(&plain).await.unwrap_err();
    assert!(none.to_string().contains("NOAUTH"), "{none}");
    // The password on the plain port.
    let plain = format!("redis://:s3cret@127.0.0.1:{}/", server.port());
    works(&Redis::connect(&plain).await.unwrap()).await;
}

#[tokio::test]
async fn a_redis_cluster_is_refused_at_connect_naming_what_is_supported() {
    let Some(server) = RedisServer::start_with_files(|dir| {
        vec![
            "--cluster-enabled".into(),
            "yes".into(),
            "--cluster-config-file".into(),
            dir.join("nodes.conf").display().to_string(),
        ]
    }) else {
        return;
    };
    let refused = Redis::connect(&server.url()).await.unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Redis Cluster is not supported - Client: this server runs with cluster-enabled \
         yes; wymcp-redis needs a standalone Redis (one primary, redis:// or rediss://, with \
         or without a password)"
    );
}
