//! The reverse of RFC 6570 expansion: the search for values whose expansion is a given URI.
//!
//! A URI is read twice at most. The strict reading admits in a value only what an expansion
//! emits there (unreserved characters and percent-escapes, plus reserved characters for `{+x}`
//! and `{#x}`), so what it finds expands back to the same URI, and a value never swallows the
//! expression after it (`{.id}{;x}` reads `.v;x=w` as `id = "v"`, `x = "w"`). Only when no
//! strict reading exists does the lenient one admit raw reserved characters a client left
//! unencoded (`users://{id}` matching `users://ada@example.com`), so long as they do not end the
//! segment (`/`, `?`, `#`). Either way a variable named in several expressions takes one value:
//! readings in which its occurrences disagree, or it is present in one and absent in another,
//! are not matches.

use std::collections::HashSet;

use super::{Op, Part, VarSpec};

/// How much of RFC 6570's character classes a value may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reading {
    /// Only what an expansion emits: the reading expansion round-trips through.
    Strict,
    /// Also raw reserved characters that do not end a segment.
    Lenient,
}

/// One variable as one expression read it: its raw text (not decoded), or absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Binding<'a> {
    pub(super) name: &'a str,
    pub(super) value: Option<&'a str>,
    explode: bool,
    /// The occurrence's prefix modifier (`{id:3}`): its value is the first `max` characters.
    pub(super) max: Option<usize>,
}

impl<'a> Binding<'a> {
    fn absent(var: &'a VarSpec) -> Self {
        Binding {
            name: var.name.as_str(),
            value: None,
            explode: var.explode,
            max: var.max,
        }
    }

    fn present(var: &'a VarSpec, value: &'a str) -> Self {
        Binding {
            value: Some(value),
            ..Binding::absent(var)
        }
    }
}

/// The backtracking search over one URI, memoized on (part, position, bindings so far of the
/// variables named more than once), bounded by a step budget.
pub(super) struct Search<'a> {
    parts: &'a [Part],
    repeated: &'a HashSet<String>,
    uri: &'a str,
    reading: Reading,
    failed: HashSet<(usize, usize, Vec<Binding<'a>>)>,
    found: Vec<Binding<'a>>,
    steps_left: usize,
    out_of_steps: bool,
}

impl<'a> Search<'a> {
    pub(super) fn new(
        parts: &'a [Part],
        repeated: &'a HashSet<String>,
        uri: &'a str,
        reading: Reading,
        steps: usize,
    ) -> Self {
        Search {
            parts,
            repeated,
            uri,
            reading,
            failed: HashSet::new(),
            found: Vec::new(),
            steps_left: steps,
            out_of_steps: false,
        }
    }

    /// The bindings of a whole-URI match, in template order; `Err(true)` when the step budget
    /// ran out first, `Err(false)` when there is no match.
    pub(super) fn run(mut self) -> Result<Vec<Binding<'a>>, bool> {
        if self.match_from(0, 0) {
            Ok(self.found)
        } else {
            Err(self.out_of_steps)
        }
    }

    /// What the rest of a search depends on besides (part, position): the bindings so far of
    /// the variables named more than once, an exploded one's by presence only (it agrees with
    /// any value).
    fn memo_key(&self, part: usize, pos: usize) -> (usize, usize, Vec<Binding<'a>>) {
        let bound = self
            .found
            .iter()
            .filter(|b| self.repeated.contains(b.name))
            .map(|b| match b.explode {
                true => Binding {
                    value: b.value.map(|_| ""),
                    ..*b
                },
                false => *b,
            })
            .collect();
        (part, pos, bound)
    }

    /// Whether `parts[part..]` matches `uri[pos..]`, extending `found` when it does.
    fn match_from(&mut self, part: usize, pos: usize) -> bool {
        let Some(current) = self.parts.get(part) else {
            return pos == self.uri.len();
        };
        let key = self.memo_key(part, pos);
        if self.failed.contains(&key) {
            return false;
        }
        let uri = self.uri;
        let rest = &uri[pos..];
        let matched = match current {
            Part::Literal(literal) => {
                rest.starts_with(literal.as_str()) && self.match_from(part + 1, pos + literal.len())
            }
            Part::Expression { op, vars } => {
                let next = match self.parts.get(part + 1) {
                    Some(Part::Literal(literal)) => Some(literal.as_str()),
                    _ => None,
                };
                self.match_expression(*op, vars, part, pos, next)
            }
        };
        if !matched {
            self.failed.insert(key);
        }
        matched
    }

    /// Tries each place the expression at `parts[part]` may end, longest first.
    fn match_expression(
        &mut self,
        op: Op,
        vars: &'a [VarSpec],
        part: usize,
        pos: usize,
        next: Option<&str>,
    ) -> bool {
        let rest = &self.uri[pos..];
        for end in expansion_ends(op, vars, self.reading, rest, next) {
            if self.steps_left == 0 {
                self.out_of_steps = true;
                return false;
            }
            self.steps_left -= 1;
            let Some(bindings) = split(op, vars, self.reading, &rest[..end]) else {
                continue;
            };
            if !self.agrees(&bindings) {
                continue;
            }
            let mark = self.found.len();
            self.found.extend(bindings);
            if self.match_from(part + 1, pos + end) {
                return true;
            }
            self.found.truncate(mark);
        }
        false
    }

    /// Whether `bindings` fit the template: a prefix modifier's length (strict reading) and
    /// the earlier bindings of the same variables.
    fn agrees(&self, bindings: &[Binding<'a>]) -> bool {
        bindings.iter().enumerate().all(|(i, b)| {
            let strict = self.reading == Reading::Strict;
            // Expansion writes a value's UTF-8 whole: a strict value decodes.
            let broken = strict && b.value.is_some_and(|v| try_decode(v).is_none());
            let too_long = strict && b.max.is_some_and(|m| longer(b, m));
            let earlier = self.found.iter().chain(&bindings[..i]);
            !broken && !too_long && earlier.filter(|f| f.name == b.name).all(|f| same(f, b))
        })
    }
}

/// Whether a binding's decoded value has more than `max` characters (a prefix modifier's
/// expansion never does).
fn longer(binding: &Binding<'_>, max: usize) -> bool {
    binding
        .value
        .is_some_and(|text| decode(text).chars().count() > max)
}

/// Whether two readings of one variable can be one value: both absent, or both present and,
/// when neither is an exploded list (whose text depends on the operator), equal once decoded
/// and cut to the shorter prefix modifier (`{x}{x:1}` reads `ada` and `a`).
fn same(a: &Binding<'_>, b: &Binding<'_>) -> bool {
    match (a.value, b.value) {
        (None, None) => true,
        (Some(x), Some(y)) if a.explode || b.explode || (x == y && a.max == b.max) => true,
        (Some(x), Some(y)) => {
            let ((short, cut), long) = if a.max.unwrap_or(usize::MAX) <= b.max.unwrap_or(usize::MAX)
            {
                ((x, a.max), y)
            } else {
                ((y, b.max), x)
            };
            let long = decode(long);
            let cut = cut.map_or(long.len(), |max| {
                long.char_indices().nth(max).map_or(long.len(), |(i, _)| i)
            });
            decode(short) == long[..cut]
        }
        _ => false,
    }
}

/// Whether a value's prefix modifier cuts fewer characters than `other`'s (no modifier cuts
/// none): the value to report of a variable named several times is the least cut.
pub(super) fn less_cut(binding: &Binding<'_>, other: &Binding<'_>) -> bool {
    binding.max.unwrap_or(usize::MAX) > other.max.unwrap_or(usize::MAX)
}

/// RFC 3986 `unreserved`.
fn unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

/// RFC 3986 `reserved` (`gen-delims` and `sub-delims`).
fn reserved(c: char) -> bool {
    matches!(
        c,
        ':' | '/'
            | '?'
            | '#'
            | '['
            | ']'
            | '@'
            | '!'
            | '$'
            | '&'
            | '\''
            | '('
            | ')'
            | '*'
            | '+'
            | ','
            | ';'
            | '='
    )
}

/// Whether an expansion of the expression may contain `c` (after its prefix).
fn admits(op: Op, vars: &[VarSpec], reading: Reading, c: char) -> bool {
    let passes_reserved = matches!(op, Op::Reserved | Op::Fragment);
    match reading {
        Reading::Strict if passes_reserved => unreserved(c) || reserved(c) || c == '%',
        Reading::Strict => {
            // A separator (`,` for the simple operator) only between several values: one
            // variable's string value has it encoded.
            let exploded = vars.iter().any(|v| v.explode);
            let several = vars.len() > 1 || exploded;
            let pairs = op.named() || exploded;
            unreserved(c) || c == '%' || (several && c == op.separator()) || (pairs && c == '=')
        }
        Reading::Lenient => match op {
            Op::Reserved | Op::Fragment => true,
            Op::Simple | Op::Label | Op::PathParam => !matches!(c, '/' | '?' | '#'),
            Op::Path => !matches!(c, '?' | '#'),
            Op::Query | Op::QueryCont => !matches!(c, '/' | '#' | '?'),
        },
    }
}

/// Where an expansion of the expression at the start of `rest` may end, longest first: a run
/// of admissible characters, cut where the `next` literal (if any) starts; a prefixed
/// expression (`{?q}`, `{/p}`, ...) may also be absent altogether (a simple or reserved one
/// names a required segment).
fn expansion_ends(
    op: Op,
    vars: &[VarSpec],
    reading: Reading,
    rest: &str,
    next: Option<&str>,
) -> Vec<usize> {
    let strict = reading == Reading::Strict;
    let limit = rest
        .char_indices()
        .find(|&(i, c)| {
            let whole_escape = || is_escape(&rest[i..]);
            let allowed = admits(op, vars, reading, c) && (!strict || c != '%' || whole_escape());
            !(allowed || (i == 0 && op.prefix() == Some(c)))
        })
        .map_or(rest.len(), |(i, _)| i);
    let mut ends: Vec<usize> = rest[..limit]
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .collect();
    // A strict value holds whole escapes: it does not end inside one (`v%2` and `0` are not
    // a reading of `v%20`).
    if strict {
        ends.retain(|&end| !inside_escape(&rest[..end]));
    }
    ends.reverse();
    if op.prefix().is_some() {
        ends.push(0);
    }
    // A literal next must start right where the expansion ends.
    ends.retain(|&end| next.is_none_or(|l| rest[end..].starts_with(l)));
    ends
}

/// Whether `text` starts with a percent-escape (`%` and two hex digits).
pub(super) fn is_escape(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 3 && b[0] == b'%' && b[1].is_ascii_hexdigit() && b[2].is_ascii_hexdigit()
}

/// Whether `text` (of whole escapes up to its end) ends one or two characters into an escape.
fn inside_escape(text: &str) -> bool {
    let b = text.as_bytes();
    b.ends_with(b"%") || (b.len() >= 2 && b[b.len() - 2] == b'%')
}

/// Splits one expression's expansion into a binding per variable occurrence (absent ones
/// included); `None` when the text cannot be an expansion of the expression.
fn split<'a>(
    op: Op,
    vars: &'a [VarSpec],
    reading: Reading,
    text: &'a str,
) -> Option<Vec<Binding<'a>>> {
    if text.is_empty() {
        return Some(vars.iter().map(Binding::absent).collect());
    }
    let body = match op.prefix() {
        Some(prefix) => text.strip_prefix(prefix)?,
        None => text,
    };
    if op.named() {
        return split_named(op, vars, reading, body);
    }
    if body.is_empty() {
        return None;
    }
    if let [var] = vars {
        // One variable: the whole body is its value (an exploded list keeps its separators; a
        // label's `.` is unreserved, so a value may hold it).
        let sep = op.separator();
        if !var.explode && sep != ',' && op != Op::Label && body.contains(sep) {
            return None;
        }
        return Some(vec![Binding::present(var, body)]);
    }
    let pieces: Vec<&str> = body.split(op.separator()).collect();
    if pieces.len() > vars.len() || pieces.iter().any(|p| p.is_empty()) {
        return None;
    }
    let mut out: Vec<_> = vars
        .iter()
        .zip(&pieces)
        .map(|(v, p)| Binding::present(v, p))
        .collect();
    out.extend(vars[pieces.len()..].iter().map(Binding::absent));
    Some(out)
}

/// The `name=value` pairs of a `;`, `?` or `&` expansion. Read strictly, they come in the
/// template's order, as expansion writes them: one per defined occurrence, a run of pairs
/// named after it for an exploded one (leaving one for each later occurrence of its name).
/// Read leniently, in any order, and an exploded variable's pairs may carry any name.
fn split_named<'a>(
    op: Op,
    vars: &'a [VarSpec],
    reading: Reading,
    body: &'a str,
) -> Option<Vec<Binding<'a>>> {
    let pairs: Vec<(&str, &str)> = body
        .split(op.separator())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect();
    if reading == Reading::Strict {
        // As expansion writes an empty value (RFC 6570 §3.2.7-3.2.9's `ifemp`): `;name`
        // with no `=` in a path parameter, `name=` in a query. A pair written otherwise is
        // no expansion of any value (`;path=` read as an empty `path` re-expands as `;path`).
        let as_expanded = |pair: &str| match pair.split_once('=') {
            Some((_, value)) => !(matches!(op, Op::PathParam) && value.is_empty()),
            None => matches!(op, Op::PathParam),
        };
        if !body.split(op.separator()).all(as_expanded) {
            return None;
        }
        let mut next = 0;
        let mut out = Vec::new();
        for (k, var) in vars.iter().enumerate() {
            let run = pairs[next..]
                .iter()
                .take_while(|(name, _)| *name == var.name)
                .count();
            let later = vars[k + 1..].iter().filter(|v| v.name == var.name).count();
            let take = if var.explode {
                run.saturating_sub(later)
            } else {
                run.min(1)
            };
            out.extend(
                pairs[next..next + take]
                    .iter()
                    .map(|(_, v)| Binding::present(var, v)),
            );
            if take == 0 {
                out.push(Binding::absent(var));
            }
            next += take;
        }
        return (next == pairs.len()).then_some(out);
    }
    let exploded = vars.iter().any(|v| v.explode);
    let mut out = Vec::new();
    for (name, value) in pairs {
        match vars.iter().find(|v| v.name == name) {
            Some(var) => out.push(Binding::present(var, value)),
            None if exploded => {}
            None => return None,
        }
    }
    let missing = vars
        .iter()
        .filter(|v| !out.iter().any(|b| b.name == v.name));
    let missing: Vec<_> = missing.map(Binding::absent).collect();
    out.extend(missing);
    Some(out)
}

/// Percent-decodes `text`; a malformed escape or non-UTF-8 result leaves the text as it came.
pub(super) fn decode(text: &str) -> String {
    try_decode(text).unwrap_or_else(|| text.to_owned())
}

/// Percent-decodes `text`; `None` for a malformed escape or a result that is not UTF-8.
fn try_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            // Two hex digits (`from_str_radix` alone would take a sign: `%+1`).
            let hex = bytes
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())?;
            out.push(hex);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}
