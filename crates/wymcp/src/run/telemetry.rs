//! What `--metrics ADDR` and `--otlp URL` start beside the server (feature `otel-export`):
//! OpenTelemetry's SDK meter provider, read by the Prometheus endpoint and/or sent over OTLP,
//! installed as the global one; under `--otlp`, a tracer provider sending the request spans,
//! the layer that hands them to it, and W3C's propagator (so a request's
//! `_meta.traceparent` parents its span). Both providers are flushed when serving ends.

use std::net::SocketAddr;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::Targets;

use super::RunError;
use super::metrics::MetricsEndpoint;
use super::otlp::OtlpExport;

/// The process's telemetry, once started.
pub(super) struct Telemetry {
    /// The Prometheus endpoint's address, under `--metrics`.
    pub(super) metrics: Option<SocketAddr>,
    meters: SdkMeterProvider,
    tracers: Option<SdkTracerProvider>,
}

impl Telemetry {
    /// Starts what the flags ask for, the resource's `service.name` being `service`. `None`
    /// when neither flag was given (nothing is installed).
    pub(super) async fn start(
        metrics: Option<SocketAddr>,
        otlp: Option<&str>,
        service: &str,
    ) -> Result<Option<Self>, RunError> {
        if metrics.is_none() && otlp.is_none() {
            return Ok(None);
        }
        let resource = Resource::builder()
            .with_service_name(service.to_owned())
            .build();
        let mut meters = SdkMeterProvider::builder().with_resource(resource.clone());
        let mut local = None;
        if let Some(addr) = metrics {
            let (endpoint, reader) = MetricsEndpoint::start(addr).await?;
            meters = meters.with_reader(reader);
            local = Some(endpoint.local);
        }
        let mut tracers = None;
        if let Some(url) = otlp {
            let export = OtlpExport::new(url).await?;
            meters = meters.with_reader(export.metrics);
            tracers = Some(
                SdkTracerProvider::builder()
                    .with_resource(resource)
                    .with_span_processor(export.spans)
                    .build(),
            );
            opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        }
        let meters = meters.build();
        opentelemetry::global::set_meter_provider(meters.clone());
        Ok(Some(Telemetry {
            metrics: local,
            meters,
            tracers,
        }))
    }

    /// Under `--otlp`, the layer that exports the request spans: wymcp's at DEBUG (the request
    /// spans' level), the rest at INFO.
    pub(super) fn layer(
        &self,
    ) -> Option<Box<dyn tracing_subscriber::Layer<tracing_subscriber::Registry> + Send + Sync>>
    {
        let tracers = self.tracers.as_ref()?;
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracers.tracer("wymcp"))
            .with_filter(
                Targets::new()
                    .with_default(LevelFilter::INFO)
                    .with_target("wymcp", LevelFilter::DEBUG),
            );
        Some(Box::new(layer))
    }

    /// Sends what is still queued (spans, the last metrics) and stops the exporters; each
    /// waits for its exports at most as long as an export may take. Off tokio's threads: the
    /// SDK's shutdown blocks.
    pub(super) async fn shutdown(&self) {
        let tracers = self.tracers.clone();
        let meters = self.meters.clone();
        let flushed = tokio::task::spawn_blocking(move || {
            if let Some(tracers) = tracers {
                if let Err(error) = tracers.shutdown() {
                    tracing::warn!("the spans could not be flushed: {error}");
                }
            }
            // The Prometheus reader has nothing to flush; OTLP's sends the last points.
            if let Err(error) = meters.shutdown() {
                tracing::warn!("the metrics could not be flushed: {error}");
            }
        });
        let _ = flushed.await;
    }
}
