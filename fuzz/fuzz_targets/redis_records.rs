//! What a `wymcp-redis` node decodes of what another node, or anyone with write access to
//! Redis, stored: session records (arbitrary text, and real records with members changed)
//! and task records. Never a panic; a record that decodes encodes back to text that decodes
//! to the same record.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use wymcp::backend::TaskRecord;
use wymcp_redis::fuzzing::{decode_session_record, encode_session_record};

fn session_record(u: &mut Unstructured) -> Result<Value> {
    let mut record = json!({
        "id": "s1", "version": "2025-11-25", "capabilities": {}, "client_info": {},
        "initialized": true,
    });
    for _ in 0..u.int_in_range(0..=4u8)? {
        let key = *u.choose(&[
            "id",
            "version",
            "capabilities",
            "client_info",
            "initialized",
            "log_level",
            "assigns",
            "subject",
            "other",
        ])?;
        let value = match u.int_in_range(0..=3u8)? {
            0 => json!(*u.choose(&[
                "2025-03-26",
                "2026-07-28",
                "1999",
                "debug",
                "emergency",
                "x"
            ])?),
            1 => Value::Null,
            _ => wymcp_fuzz::json::value(u, 3)?,
        };
        record[key] = value;
    }
    Ok(record)
}

fn task_record(u: &mut Unstructured) -> Result<Value> {
    let mut record = json!({
        "id": "t1", "principal": "alice", "tool": "count", "status": "working",
        "created_at_ms": 1, "last_updated_at_ms": 2, "ttl_ms": 60_000,
        "result": null, "error": null, "node": "a", "heartbeat_ms": 3,
    });
    for _ in 0..u.int_in_range(0..=4u8)? {
        let key = *u.choose(&[
            "id",
            "principal",
            "tool",
            "status",
            "created_at_ms",
            "ttl_ms",
            "result",
            "error",
            "node",
            "heartbeat_ms",
            "input_requests",
            "other",
        ])?;
        let value = match u.int_in_range(0..=3u8)? {
            0 => json!(*u.choose(&["completed", "failed", "cancelled", "input_required", "x"])?),
            1 => json!(u.arbitrary::<i64>()?),
            _ => wymcp_fuzz::json::value(u, 3)?,
        };
        record[key] = value;
    }
    Ok(record)
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let (session, task) = match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 => {
            let text = String::from_utf8_lossy(u.take_rest()).into_owned();
            (text.clone(), text)
        }
        _ => {
            let (Ok(session), Ok(task)) = (session_record(&mut u), task_record(&mut u)) else {
                return;
            };
            (session.to_string(), task.to_string())
        }
    };
    if let Ok(record) = decode_session_record(&session) {
        let text = encode_session_record(&record).expect("a decoded record encodes");
        let again = decode_session_record(&text).expect("an encoded record decodes");
        assert_eq!(again, record, "the record changed through Redis: {session}");
    }
    if let Ok(record) = serde_json::from_str::<TaskRecord>(&task) {
        let text = serde_json::to_string(&record).expect("a task record encodes");
        let again: TaskRecord = serde_json::from_str(&text).expect("an encoded task decodes");
        assert_eq!(
            serde_json::to_value(&again).ok(),
            serde_json::to_value(&record).ok(),
            "the task record changed through Redis: {task}"
        );
    }
});
