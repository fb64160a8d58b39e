//! `RedisEventLog` against a real `redis-server`: bounded by events and by bytes of data, as
//! the in-memory log is (issue 48, N4: one session made Redis hold about 100 MB of events,
//! since `XADD … MAXLEN` bounded the count alone).

#![allow(clippy::unwrap_used, missing_docs)]

mod support;

use wymcp::backend::EventLog;
use wymcp_redis::Redis;

use support::redis_server::RedisServer;

#[tokio::test]
async fn the_log_keeps_its_newest_events_within_the_byte_bound() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let log = Redis::connect(&redis.url())
        .await
        .unwrap()
        .max_events(1_000)
        .max_event_bytes(10_000)
        .event_log();
    // 300 events of 1,000 bytes: 300 kB sent, 10 kB may stay.
    let mut ids = Vec::new();
    for n in 0..300 {
        let data = format!("{n:04}{}", "x".repeat(996));
        ids.push(log.append("s", "post1", data).await.unwrap());
    }
    // The tenth newest event is still there: the nine after it are replayed.
    let kept = log.replay_after("s", &ids[290]).await.unwrap().unwrap();
    let numbers: Vec<&str> = kept.iter().map(|e| &e.data[..4]).collect();
    assert_eq!(
        numbers,
        [
            "0291", "0292", "0293", "0294", "0295", "0296", "0297", "0298", "0299"
        ]
    );
    // The eleventh newest is gone: a resumption from it is not replayed.
    assert_eq!(log.replay_after("s", &ids[289]).await.unwrap(), None);
    // Redis holds the ten newest, and counts their bytes.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let len: usize = redis::cmd("XLEN")
        .arg("wymcp:events:s")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(len, 10);
    let bytes: usize = redis::cmd("GET")
        .arg("wymcp:event-bytes:s")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(bytes, 10_000);
    // An event larger than the bound is kept alone, as the newest.
    let big = log.append("s", "post2", "y".repeat(20_000)).await.unwrap();
    assert_eq!(log.replay_after("s", &big).await.unwrap(), Some(Vec::new()));
    assert_eq!(log.replay_after("s", &ids[299]).await.unwrap(), None);
    // Forgetting the session forgets its count too.
    log.remove_session("s").await.unwrap();
    let left: usize = redis::cmd("EXISTS")
        .arg("wymcp:events:s")
        .arg("wymcp:event-bytes:s")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

#[tokio::test]
async fn the_event_count_still_bounds_the_log() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let log = Redis::connect(&redis.url())
        .await
        .unwrap()
        .max_events(5)
        .event_log();
    let mut ids = Vec::new();
    for n in 0..20 {
        ids.push(log.append("s", "get", format!("{n}")).await.unwrap());
    }
    let kept = log.replay_after("s", &ids[15]).await.unwrap().unwrap();
    let data: Vec<&str> = kept.iter().map(|e| e.data.as_str()).collect();
    assert_eq!(data, ["16", "17", "18", "19"]);
    assert_eq!(log.replay_after("s", &ids[14]).await.unwrap(), None);
}
