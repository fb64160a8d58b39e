//! The tasks running on this node, as OpenTelemetry's up-down counter `wymcp.server.tasks`
//! (feature `otel`), through the global meter provider: one more while a task's call runs
//! here, one less when it ends however it ends (finished, cancelled, panicked, dropped).

use std::sync::OnceLock;

use opentelemetry::metrics::UpDownCounter;

fn counter() -> &'static UpDownCounter<i64> {
    static COUNTER: OnceLock<UpDownCounter<i64>> = OnceLock::new();
    COUNTER.get_or_init(|| {
        let scope = opentelemetry::InstrumentationScope::builder("wymcp")
            .with_version(env!("CARGO_PKG_VERSION"))
            .build();
        opentelemetry::global::meter_with_scope(scope)
            .i64_up_down_counter("wymcp.server.tasks")
            .with_unit("{task}")
            .with_description("Tasks whose call is running on this node.")
            .build()
    })
}

/// Counts one task running until dropped.
pub(super) struct Running(());

impl Running {
    pub(super) fn start() -> Self {
        counter().add(1, &[]);
        Running(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        counter().add(-1, &[]);
    }
}
