//! [`Loads`]: the session loads of concurrent requests sent to Redis together, as one
//! pipeline: under load, one write and one read carry many requests' `GETEX` instead of a
//! system call pair each.

use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use redis::aio::ConnectionManager;
use tokio::sync::{Notify, oneshot};

/// A load waiting for the next batch: its key, the TTL to renew it with, where its answer goes.
struct Pending {
    key: String,
    ttl_ms: u64,
    answer: oneshot::Sender<Result<Option<String>, String>>,
}

struct Shared {
    queue: Mutex<Vec<Pending>>,
    wake: Notify,
}

/// Sends the loads queued by concurrent requests in one pipeline: the requests that are ready
/// in the same turn of the scheduler share one write to Redis and its answer. A load alone
/// goes alone, one turn later.
pub(crate) struct Loads {
    shared: Arc<Shared>,
    /// The batching task, started by the first load (a store may be made outside a runtime);
    /// aborted when the last clone of the store is dropped.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
    conn: ConnectionManager,
}

impl Loads {
    pub(crate) fn new(conn: ConnectionManager) -> Self {
        Loads {
            shared: Arc::new(Shared {
                queue: Mutex::new(Vec::new()),
                wake: Notify::new(),
            }),
            task: Mutex::new(None),
            conn,
        }
    }

    /// `GETEX key PX ttl_ms`, in the next batch: the record's text, if there is one.
    pub(crate) async fn load(&self, key: String, ttl_ms: u64) -> Result<Option<String>, String> {
        let (answer, answered) = oneshot::channel();
        self.start();
        let first = {
            let mut queue = self
                .shared
                .queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            queue.push(Pending {
                key,
                ttl_ms,
                answer,
            });
            queue.len() == 1
        };
        if first {
            self.shared.wake.notify_one();
        }
        answered
            .await
            .unwrap_or_else(|_| Err("the batching task stopped".to_owned()))
    }

    /// Starts the batching task unless it runs (again, when the runtime it ran on ended).
    fn start(&self) {
        let mut task = self.task.lock().unwrap_or_else(PoisonError::into_inner);
        if task
            .as_ref()
            .is_none_or(tokio::task::JoinHandle::is_finished)
        {
            let (shared, conn) = (self.shared.clone(), self.conn.clone());
            *task = Some(tokio::spawn(run(shared, conn)));
        }
    }
}

impl Drop for Loads {
    fn drop(&mut self) {
        if let Some(task) = self
            .task
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            task.abort();
        }
    }
}

/// Waits for loads, lets the other ready requests queue theirs (one yield), then sends all
/// that are queued as one pipeline; batches are answered concurrently, so a load never waits
/// for another batch (while Redis does not answer, each fails after the connection's response
/// timeout, as a load of its own would).
async fn run(shared: Arc<Shared>, conn: ConnectionManager) {
    let mut in_flight = FuturesUnordered::new();
    loop {
        tokio::select! {
            () = shared.wake.notified() => {
                tokio::task::yield_now().await;
                let batch = std::mem::take(
                    &mut *shared.queue.lock().unwrap_or_else(PoisonError::into_inner),
                );
                if !batch.is_empty() {
                    in_flight.push(send(conn.clone(), batch));
                }
            }
            Some(()) = in_flight.next(), if !in_flight.is_empty() => {}
        }
    }
}

/// One batch as one pipeline; each load handed its answer.
async fn send(mut conn: ConnectionManager, batch: Vec<Pending>) {
    let mut pipe = redis::pipe();
    for pending in &batch {
        pipe.cmd("GETEX")
            .arg(&pending.key)
            .arg("PX")
            .arg(pending.ttl_ms);
    }
    let reason = match pipe.query_async::<Vec<Option<String>>>(&mut conn).await {
        Ok(texts) if texts.len() == batch.len() => {
            for (pending, text) in batch.into_iter().zip(texts) {
                let _ = pending.answer.send(Ok(text));
            }
            return;
        }
        Ok(texts) => format!("{} answers to {} loads", texts.len(), batch.len()),
        Err(err) => err.to_string(),
    };
    for pending in batch {
        let _ = pending.answer.send(Err(reason.clone()));
    }
}
