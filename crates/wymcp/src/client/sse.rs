//! A bounded reader of `text/event-stream` bodies: bytes in, each event's `data` out, no event
//! held past [`Limit::EventBytes`](super::Limit::EventBytes); the stream's last event id and
//! `retry` kept for resumption.

use std::time::Duration;

/// What a line may hold past the limit: its field's name, colon and space (`retry: `).
const FIELD_NAME_ROOM: usize = 8;

/// One event read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// The event's data (its `data:` lines joined with `\n`).
    Data(Vec<u8>),
    /// The event's data went past the limit: it was read and dropped, never held.
    TooLarge,
}

/// Bytes fed in chunks become events. `id` sets the stream's last event id when its event
/// ends (an event without data, as a priming event, included), `retry` the reconnection
/// delay; `event` and comments are read and dropped: the client needs only the data of each
/// event (a JSON-RPC message).
#[derive(Debug)]
pub(crate) struct SseReader {
    /// The line being read (no newline yet).
    line: Vec<u8>,
    /// Whether the line being read went past the limit (the rest of it is dropped).
    line_dropped: bool,
    /// The current event's data so far.
    data: Vec<u8>,
    /// Whether the current event has a `data` field yet (an empty one counts).
    has_data: bool,
    /// Whether the current event went past the limit.
    too_large: bool,
    /// The `id` of the current event, committed at its end.
    pending_id: Option<String>,
    /// The id of the last event read to its end.
    last_event_id: Option<String>,
    retry: Option<Duration>,
    /// Whether the last byte fed was a `\r` (a `\n` right after it ends no second line).
    after_cr: bool,
    max_event: usize,
}

impl SseReader {
    pub(crate) fn new(max_event: usize) -> Self {
        SseReader {
            line: Vec::new(),
            line_dropped: false,
            data: Vec::new(),
            has_data: false,
            too_large: false,
            pending_id: None,
            last_event_id: None,
            retry: None,
            after_cr: false,
            max_event,
        }
    }

    /// The id of the last event read to its end, for `Last-Event-ID`.
    pub(crate) fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection delay the server last asked for (`retry:`).
    pub(crate) fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Forgets a partly read event (its connection dropped): the next bytes start a new
    /// stream, with the last event id and the delay kept.
    pub(crate) fn restart(&mut self) {
        self.line.clear();
        self.line_dropped = false;
        self.data.clear();
        self.has_data = false;
        self.too_large = false;
        self.pending_id = None;
        self.after_cr = false;
    }

    /// Feeds `chunk`; every event it completes is handed to `on_event` in order (which may
    /// stop the reading by answering `false`: the answer, then).
    pub(crate) fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(Event) -> bool) -> bool {
        for &byte in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                b'\n' if after_cr => {}
                b'\r' | b'\n' => {
                    if let Some(event) = self.end_line()
                        && !on_event(event)
                    {
                        return false;
                    }
                }
                _ if self.line_dropped => {}
                _ => {
                    if self.line.len() >= self.max_event + FIELD_NAME_ROOM {
                        // Too long to be anything but data past the limit: dropped unread.
                        self.line.clear();
                        self.line_dropped = true;
                        self.too_large = true;
                        self.data.clear();
                    } else {
                        self.line.push(byte);
                    }
                }
            }
        }
        true
    }

    /// Ends the line read: a blank line ends the event (dispatched when it has data).
    fn end_line(&mut self) -> Option<Event> {
        let line = std::mem::take(&mut self.line);
        if std::mem::replace(&mut self.line_dropped, false) {
            return None;
        }
        if line.is_empty() {
            if let Some(id) = self.pending_id.take() {
                self.last_event_id = Some(id);
            }
            let had = std::mem::replace(&mut self.has_data, false);
            let data = std::mem::take(&mut self.data);
            if std::mem::replace(&mut self.too_large, false) {
                return Some(Event::TooLarge);
            }
            return had.then_some(Event::Data(data));
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return None, // a comment (keepalive)
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        match field {
            b"data" if !self.too_large => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                if self.data.len() + value.len() > self.max_event {
                    self.too_large = true;
                    self.data.clear();
                } else {
                    self.data.extend_from_slice(value);
                    self.has_data = true;
                }
            }
            // An id with a NUL is ignored, as the SSE standard says.
            b"id" if !value.contains(&0) => {
                self.pending_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" => {
                if let Some(ms) = std::str::from_utf8(value)
                    .ok()
                    .and_then(|v| v.parse::<u64>().ok())
                {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Event, SseReader};

    fn events(reader: &mut SseReader, chunks: &[&[u8]]) -> Vec<Option<String>> {
        let mut out = Vec::new();
        for chunk in chunks {
            reader.feed(chunk, |e| {
                out.push(match e {
                    Event::Data(data) => Some(String::from_utf8_lossy(&data).into_owned()),
                    Event::TooLarge => None,
                });
                true
            });
        }
        out
    }

    #[test]
    fn events_split_across_chunks_and_line_endings_are_read() {
        let mut reader = SseReader::new(1024);
        let got = events(
            &mut reader,
            &[
                b": keepalive\n\nid: 1\nevent: message\nda",
                b"ta: {\"a\":1}\r\n\r",
                b"\ndata: x\ndata: y\n\n",
            ],
        );
        assert_eq!(got, [Some("{\"a\":1}".to_owned()), Some("x\ny".to_owned())]);
        assert_eq!(reader.last_event_id(), Some("1"));
    }

    #[test]
    fn an_event_over_the_limit_is_dropped_unheld_and_the_stream_read_on() {
        let mut reader = SseReader::new(8);
        let got = events(
            &mut reader,
            &[b"id: a\ndata: 0123456789\n\nid: b\ndata: 0123\ndata: 4567\n\ndata: ok\n\n"],
        );
        assert_eq!(got, [None, None, Some("ok".to_owned())]);
        // The dropped events' ids count: a resumption does not ask for them again.
        assert_eq!(reader.last_event_id(), Some("b"));
        // A line past the limit is not kept while it is read.
        let mut reader = SseReader::new(8);
        reader.feed(&[b'x'; 4096], |_| true);
        assert!(reader.line.is_empty() && reader.data.is_empty());
    }

    #[test]
    fn the_id_is_committed_when_its_event_ends_and_retry_is_kept() {
        let mut reader = SseReader::new(1024);
        let got = events(
            &mut reader,
            &[b"id: p.1\nretry: 300\ndata: \n\nid: p.2\ndata: {}"],
        );
        assert_eq!(got, [Some(String::new())]);
        // The second event never ended: a resumption asks for what came after p.1.
        assert_eq!(reader.last_event_id(), Some("p.1"));
        assert_eq!(reader.retry(), Some(Duration::from_millis(300)));
        reader.restart();
        let got = events(&mut reader, &[b"data: 1\n\n"]);
        assert_eq!(got, [Some("1".to_owned())]);
        assert_eq!(reader.last_event_id(), Some("p.1"));
    }
}
