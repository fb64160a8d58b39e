//! A bounded reader of `text/event-stream` bodies: bytes in, each event's `data` out, no event
//! held past [`Limit::EventBytes`](super::Limit::EventBytes).

/// Bytes fed in chunks become complete events' `data` (the `data:` lines joined with `\n`).
/// `event`, `id`, `retry` and comments are read and dropped: the client needs only the data
/// of each event (a JSON-RPC message), and resumption is out of this slice's scope.
#[derive(Debug)]
pub(crate) struct SseReader {
    /// The line being read (no newline yet).
    line: Vec<u8>,
    /// The current event's data so far.
    data: Vec<u8>,
    /// Whether the current event has a `data` field yet (an empty one counts).
    has_data: bool,
    /// Whether the last byte fed was a `\r` (a `\n` right after it ends no second line).
    after_cr: bool,
    max_event: usize,
}

/// One event's data would exceed the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventTooLarge;

impl SseReader {
    pub(crate) fn new(max_event: usize) -> Self {
        SseReader {
            line: Vec::new(),
            data: Vec::new(),
            has_data: false,
            after_cr: false,
            max_event,
        }
    }

    /// Feeds `chunk`; every event it completes is handed to `on_event` in order (which may
    /// stop the reading by answering `false`).
    pub(crate) fn feed(
        &mut self,
        chunk: &[u8],
        mut on_event: impl FnMut(Vec<u8>) -> bool,
    ) -> Result<bool, EventTooLarge> {
        for &byte in chunk {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                b'\n' if after_cr => {}
                b'\r' | b'\n' => {
                    if let Some(event) = self.end_line()?
                        && !on_event(event)
                    {
                        return Ok(false);
                    }
                }
                _ => {
                    if self.line.len() + self.data.len() >= self.max_event {
                        return Err(EventTooLarge);
                    }
                    self.line.push(byte);
                }
            }
        }
        Ok(true)
    }

    /// Ends the line read: a blank line dispatches the event (when it has data).
    fn end_line(&mut self) -> Result<Option<Vec<u8>>, EventTooLarge> {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            let had = std::mem::replace(&mut self.has_data, false);
            let data = std::mem::take(&mut self.data);
            return Ok(had.then_some(data));
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return Ok(None), // a comment (keepalive)
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (&line[..], &[][..]),
        };
        if field == b"data" {
            if self.has_data {
                self.data.push(b'\n');
            }
            if self.data.len() + value.len() > self.max_event {
                return Err(EventTooLarge);
            }
            self.data.extend_from_slice(value);
            self.has_data = true;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::{EventTooLarge, SseReader};

    fn events(reader: &mut SseReader, chunks: &[&[u8]]) -> Result<Vec<String>, EventTooLarge> {
        let mut out = Vec::new();
        for chunk in chunks {
            reader.feed(chunk, |e| {
                out.push(String::from_utf8_lossy(&e).into_owned());
                true
            })?;
        }
        Ok(out)
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
        assert_eq!(got, Ok(vec!["{\"a\":1}".to_owned(), "x\ny".to_owned()]));
    }

    #[test]
    fn an_event_over_the_limit_is_refused_before_it_is_held() {
        let mut reader = SseReader::new(8);
        assert_eq!(
            events(&mut reader, &[b"data: 0123456789\n\n"]),
            Err(EventTooLarge)
        );
        let mut reader = SseReader::new(8);
        assert_eq!(
            events(&mut reader, &[b"data: 0123\ndata: 4567\n\n"]),
            Err(EventTooLarge)
        );
    }
}
