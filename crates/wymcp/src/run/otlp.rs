//! `--otlp URL` (feature `otel-export`): the request spans and the metrics sent to an
//! OpenTelemetry collector over OTLP/HTTP (protobuf), at `URL/v1/traces` and `URL/v1/metrics`.
//!
//! Spans wait in the SDK's batch span processor: a bounded queue (2,048 spans; a span that
//! finds it full is dropped), sent in batches of at most 512 every 5 seconds (the SDK's
//! defaults, changed by `OTEL_BSP_MAX_QUEUE_SIZE`, `OTEL_BSP_MAX_EXPORT_BATCH_SIZE`,
//! `OTEL_BSP_SCHEDULE_DELAY`). Metrics go every 60 seconds (`OTEL_METRIC_EXPORT_INTERVAL`).
//! Each export has [`EXPORT_TIMEOUT`], its retries (3, after a failed connection or HTTP 429,
//! 502, 503, 504) included; a collector's answer is read up to [`MAX_ANSWER_BYTES`]. Both are flushed when serving ends
//! ([`Telemetry::shutdown`](super::telemetry::Telemetry::shutdown)).

use std::io::Read as _;
use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    MetricExporter, Protocol, SpanExporter, WithExportConfig as _, WithHttpConfig as _,
};
use opentelemetry_sdk::metrics::PeriodicReader;
use opentelemetry_sdk::trace::BatchSpanProcessor;

use super::RunError;

/// How long one export to the collector may take, its retries included (OTLP's default),
/// before it is abandoned; each request is bounded by it too.
pub(super) const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// The most of a collector's answer that is read (an OTLP answer is a few bytes: a partial
/// success at most); a longer one fails that export.
pub(super) const MAX_ANSWER_BYTES: u64 = 64 * 1024;

/// The exporters of `--otlp URL`, ready for the tracer and meter providers.
pub(super) struct OtlpExport {
    pub(super) spans: BatchSpanProcessor,
    pub(super) metrics: PeriodicReader<MetricExporter>,
}

impl OtlpExport {
    /// Exporters sending to `URL/v1/traces` and `URL/v1/metrics`. `url` is `http://` or
    /// `https://` (the command line checked it); one that does not parse is refused here.
    pub(super) async fn new(url: &str) -> Result<Self, RunError> {
        let refused = |reason: String| RunError::Otlp {
            url: url.to_owned(),
            source: std::io::Error::other(reason),
        };
        let base = url.trim_end_matches('/');
        let client = Collector::new(base).await.map_err(&refused)?;
        let spans = SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/traces"))
            .with_timeout(EXPORT_TIMEOUT)
            .with_http_client(client.clone())
            .build()
            .map_err(|error| refused(error.to_string()))?;
        let metrics = MetricExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(format!("{base}/v1/metrics"))
            .with_timeout(EXPORT_TIMEOUT)
            .with_http_client(client)
            .build()
            .map_err(|error| refused(error.to_string()))?;
        Ok(OtlpExport {
            spans: BatchSpanProcessor::builder(spans).build(),
            metrics: PeriodicReader::builder(metrics).build(),
        })
    }
}

/// The exporters' HTTP client: reqwest's blocking client (the SDK exports from threads of its
/// own, outside tokio). A failed export is logged as one WARN line, the collector named.
#[derive(Debug, Clone)]
struct Collector {
    client: reqwest::blocking::Client,
    base: String,
}

impl Collector {
    /// A client with [`EXPORT_TIMEOUT`], built off the runtime: the blocking client runs a
    /// runtime of its own, which cannot be started on one of tokio's threads.
    async fn new(base: &str) -> Result<Self, String> {
        reqwest::Url::parse(base).map_err(|error| format!("not a URL: {error}"))?;
        let client = tokio::task::spawn_blocking(|| {
            reqwest::blocking::Client::builder()
                .timeout(EXPORT_TIMEOUT)
                .build()
        })
        .await
        .map_err(|error| format!("the HTTP client could not be built: {error}"))?
        .map_err(|error| format!("the HTTP client could not be built: {error}"))?;
        Ok(Collector {
            client,
            base: base.to_owned(),
        })
    }

    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let mut answer = self.client.execute(request.try_into()?)?;
        let mut body = Vec::new();
        (&mut answer)
            .take(MAX_ANSWER_BYTES + 1)
            .read_to_end(&mut body)?;
        if body.len() as u64 > MAX_ANSWER_BYTES {
            return Err(
                format!("the collector's answer is longer than {MAX_ANSWER_BYTES} bytes").into(),
            );
        }
        let mut response = Response::builder().status(answer.status());
        if let Some(headers) = response.headers_mut() {
            *headers = std::mem::take(answer.headers_mut());
        }
        Ok(response.body(Bytes::from(body))?)
    }
}

#[async_trait::async_trait]
impl HttpClient for Collector {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let path = request.uri().path().to_owned();
        let sent = self.send(request);
        match &sent {
            Err(error) => {
                tracing::warn!("OTLP export to {}{path} failed: {error}", self.base);
            }
            Ok(answer) if !answer.status().is_success() => {
                tracing::warn!(
                    "OTLP export to {}{path} refused: HTTP {}",
                    self.base,
                    answer.status()
                );
            }
            Ok(_) => {}
        }
        sent
    }
}
