//! [`Accept`]: what a request's `Accept` header allows, read once over its media ranges.

use axum::http::HeaderValue;

use super::headers::WireHeaders;

/// What a request's `Accept` header allows, read in one pass: what POST, GET and
/// `subscriptions/listen` ask of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Accept {
    /// `application/json`, by name or by a wildcard (`*/*`, `application/*`); also when there
    /// is no `Accept` header at all.
    pub(crate) json: bool,
    /// `text/event-stream` named itself (not only through a wildcard): a session-era answer
    /// may be a stream.
    pub(crate) sse: bool,
    /// `text/event-stream` admitted, by name or by a wildcard, or no `Accept` header at all: a
    /// 2026-07-28 answer may be a stream, and a GET stream or a listen stream may open.
    pub(crate) admits_sse: bool,
}

impl Accept {
    pub(crate) fn of(wire: &WireHeaders<'_>) -> Self {
        let mut seen = false;
        let (mut json, mut sse, mut admits_sse) = (false, false, false);
        for line in wire.accept_lines() {
            seen = true;
            // What the official SDKs send, compared whole before anything is split.
            if line.as_bytes() == b"application/json, text/event-stream" {
                (json, sse, admits_sse) = (true, true, true);
                continue;
            }
            for range in media_ranges(line) {
                json = json || range_admits(range, b"application/json");
                sse = sse || range.eq_ignore_ascii_case(b"text/event-stream");
                admits_sse = admits_sse || range_admits(range, b"text/event-stream");
            }
        }
        Accept {
            json: json || !seen,
            sse,
            admits_sse: admits_sse || !seen,
        }
    }
}

/// The media ranges one `Accept` header line lists, parameters cut and trimmed, read over
/// bytes in place (every POST reads them: nothing is allocated, and a byte loop beats
/// `str::split`'s memchr per piece on a line this short). A line that is not visible ASCII
/// lists none.
fn media_ranges(line: &HeaderValue) -> impl Iterator<Item = &[u8]> {
    line.to_str()
        .ok()
        .into_iter()
        .flat_map(|line| line.as_bytes().split(|&b| b == b','))
        .map(|range| {
            range
                .split(|&b| b == b';')
                .next()
                .unwrap_or_default()
                .trim_ascii()
        })
}

/// Whether a media range admits `wanted` (`type/subtype`): by name, as `*/*`, or as `type/*`,
/// case-insensitively.
fn range_admits(range: &[u8], wanted: &[u8]) -> bool {
    range.eq_ignore_ascii_case(wanted)
        || range == b"*/*"
        || range.strip_suffix(b"/*").is_some_and(|kind| {
            wanted
                .split(|&b| b == b'/')
                .next()
                .is_some_and(|wanted_kind| wanted_kind.eq_ignore_ascii_case(kind))
        })
}

#[cfg(test)]
mod tests {
    use axum::http::{HeaderMap, HeaderValue, header};

    use super::{Accept, range_admits};
    use crate::transport::http::headers::WireHeaders;

    fn accept(values: &[&'static str]) -> (bool, bool) {
        let accept = accept_of(values);
        (accept.json, accept.sse)
    }

    fn accept_of(values: &[&'static str]) -> Accept {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::ACCEPT, HeaderValue::from_static(value));
        }
        Accept::of(&WireHeaders::of(&headers))
    }

    #[test]
    fn event_streams_are_admitted_by_name_wildcard_or_no_accept_header() {
        for admitted in [
            &["application/json, text/event-stream"][..],
            &["text/*"],
            &["*/*;q=0.1"],
            &["application/json", "TEXT/EVENT-STREAM"],
            &["application/json", "text/*;q=0.1"],
            &[],
        ] {
            assert!(accept_of(admitted).admits_sse, "{admitted:?}");
        }
        for refused in [&["application/json"][..], &["text/plain, application/*"]] {
            assert!(!accept_of(refused).admits_sse, "{refused:?}");
        }
    }

    #[test]
    fn accept_reads_json_and_event_stream_by_name_wildcard_and_parameters() {
        assert_eq!(
            accept(&["application/json, text/event-stream"]),
            (true, true)
        );
        assert_eq!(
            accept(&["Text/Event-Stream;q=0.9 ,APPLICATION/JSON"]),
            (true, true)
        );
        assert_eq!(
            accept(&["text/event-stream", "application/json"]),
            (true, true)
        );
        assert_eq!(
            accept(&["*/*"]),
            (true, false),
            "a wildcard is not a stream"
        );
        assert_eq!(accept(&["application/*; q=0.5"]), (true, false));
        assert_eq!(accept(&["text/event-stream"]), (false, true));
        assert_eq!(accept(&["application/jsonl, text/*"]), (false, false));
        assert_eq!(accept(&[]), (true, false), "no Accept header accepts JSON");
    }

    #[test]
    fn a_range_admits_by_name_by_wildcard_and_by_its_type() {
        let wanted = b"text/event-stream";
        for range in [
            &b"text/event-stream"[..],
            b"TEXT/Event-Stream",
            b"*/*",
            b"text/*",
        ] {
            assert!(range_admits(range, wanted), "{range:?}");
        }
        for range in [
            &b"application/*"[..],
            b"text/plain",
            b"text/event-streams",
            b"",
        ] {
            assert!(!range_admits(range, wanted), "{range:?}");
        }
    }
}
