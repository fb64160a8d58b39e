//! [`UriTemplate`]: an RFC 6570 URI template, validated by `iri-string`, matched against URIs.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use iri_string::template::UriTemplateStr;

/// The variables a URI matched a template with, percent-decoded, by name.
///
/// ```
/// use wymcp::resource::UriTemplate;
///
/// let template = UriTemplate::parse("test://users/{id}/posts{?page}").unwrap();
/// let vars = template.match_uri("test://users/ada%20l/posts?page=2").unwrap();
/// assert_eq!(vars.get("id"), Some("ada l"));
/// assert_eq!(vars.get("page"), Some("2"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variables(BTreeMap<String, String>);

impl Variables {
    /// No variables (what a static resource's reader receives).
    pub fn new() -> Self {
        Variables(BTreeMap::new())
    }

    /// The value of `name`, when the URI carried it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// Sets `name` (for tests and callers building variables by hand).
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.0.insert(name.into(), value.into());
    }

    /// Every variable, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// How many variables the URI carried.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the URI carried no variables.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Expression { op: Op, vars: Vec<VarSpec> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    explode: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    PathParam,
    Query,
    QueryCont,
}

impl Op {
    fn from_char(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::PathParam,
            '?' => Op::Query,
            '&' => Op::QueryCont,
            _ => return None,
        })
    }

    /// The character an expansion starts with, when it has one.
    fn prefix(self) -> Option<char> {
        match self {
            Op::Simple | Op::Reserved => None,
            Op::Fragment => Some('#'),
            Op::Label => Some('.'),
            Op::Path => Some('/'),
            Op::PathParam => Some(';'),
            Op::Query => Some('?'),
            Op::QueryCont => Some('&'),
        }
    }

    /// The separator between the values of the expansion.
    fn separator(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::PathParam => ';',
            Op::Query | Op::QueryCont => '&',
        }
    }

    /// `name=value` pairs (`;`, `?`, `&`).
    fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryCont)
    }

    /// Whether an expansion of this operator may contain `c`.
    fn admits(self, c: char) -> bool {
        match self {
            Op::Reserved | Op::Fragment => true,
            Op::Simple | Op::Label | Op::PathParam => !matches!(c, '/' | '?' | '#'),
            Op::Path => !matches!(c, '?' | '#'),
            Op::Query | Op::QueryCont => !matches!(c, '/' | '#' | '?'),
        }
    }
}

/// An RFC 6570 URI template (up to Level 4), parsed once and matched against URIs.
///
/// Parsing is `iri-string`'s, which refuses every malformed template with the position of the
/// fault; matching is the reverse of expansion: a URI matches when some values of the variables
/// expand to it. Values are percent-decoded. A variable whose expansion is absent from the URI
/// (an optional query parameter, say) is absent from the [`Variables`]; exploded lists arrive as
/// the text they matched, separators kept.
///
/// ```
/// use wymcp::resource::UriTemplate;
///
/// let template = UriTemplate::parse("test://template/{id}/data").unwrap();
/// assert_eq!(template.variables(), ["id"]);
/// assert_eq!(template.match_uri("test://template/123/data").unwrap().get("id"), Some("123"));
/// assert!(template.match_uri("test://template/1/2/data").is_none());
/// assert!(UriTemplate::parse("test://{unclosed").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriTemplate {
    text: String,
    parts: Vec<Part>,
    variables: Vec<String>,
}

impl UriTemplate {
    /// The longest URI, in bytes, that [`match_uri`](Self::match_uri) tries to match.
    pub const MAX_MATCH_LEN: usize = 8 * 1024;

    /// Parses `template`; the error is the parser's reason.
    pub fn parse(template: &str) -> Result<UriTemplate, String> {
        UriTemplateStr::new(template).map_err(|e| e.to_string())?;
        let mut parts = Vec::new();
        let mut variables = Vec::new();
        let mut seen = HashSet::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest
                        .find('}')
                        .ok_or_else(|| "unclosed expression".to_owned())?;
                    let body = &rest[1..end];
                    let mut chars = body.chars();
                    let (op, list) = match chars.next().and_then(Op::from_char) {
                        Some(op) => (op, chars.as_str()),
                        None => (Op::Simple, body),
                    };
                    let mut vars = Vec::new();
                    for spec in list.split(',') {
                        let (name, explode) = match spec.strip_suffix('*') {
                            Some(name) => (name, true),
                            None => (spec.split(':').next().unwrap_or(spec), false),
                        };
                        if seen.insert(name.to_owned()) {
                            variables.push(name.to_owned());
                        }
                        vars.push(VarSpec {
                            name: name.to_owned(),
                            explode,
                        });
                    }
                    parts.push(Part::Expression { op, vars });
                    rest = &rest[end + 1..];
                }
                Some(i) => {
                    parts.push(Part::Literal(rest[..i].to_owned()));
                    rest = &rest[i..];
                }
                None => {
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            text: template.to_owned(),
            parts,
            variables,
        })
    }

    /// The template as declared.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The variable names, in order of first appearance.
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// The variables `uri` matches this template with, or `None` when it does not match.
    ///
    /// The search is memoized, polynomial in the URI's length; a URI longer than
    /// [`MAX_MATCH_LEN`](Self::MAX_MATCH_LEN) bytes matches no template.
    pub fn match_uri(&self, uri: &str) -> Option<Variables> {
        if uri.len() > Self::MAX_MATCH_LEN {
            return None;
        }
        let mut failed = HashSet::new();
        let mut found = Vec::new();
        if self.match_from(uri, 0, 0, &mut failed, &mut found) {
            let mut vars = Variables::new();
            for (name, value) in found.into_iter().rev() {
                vars.0
                    .entry(name.to_owned())
                    .or_insert_with(|| decode(value));
            }
            Some(vars)
        } else {
            None
        }
    }

    /// Backtracking match of `parts[part..]` against `uri[pos..]`; `failed` memoizes the
    /// (part, pos) pairs known not to match, so the search stays polynomial.
    fn match_from<'a>(
        &'a self,
        uri: &'a str,
        part: usize,
        pos: usize,
        failed: &mut HashSet<(usize, usize)>,
        found: &mut Vec<(&'a str, &'a str)>,
    ) -> bool {
        let Some(current) = self.parts.get(part) else {
            return pos == uri.len();
        };
        if failed.contains(&(part, pos)) {
            return false;
        }
        let rest = &uri[pos..];
        let matched = match current {
            Part::Literal(literal) => {
                rest.starts_with(literal.as_str())
                    && self.match_from(uri, part + 1, pos + literal.len(), failed, found)
            }
            Part::Expression { op, vars } => {
                let next = match self.parts.get(part + 1) {
                    Some(Part::Literal(literal)) => Some(literal.as_str()),
                    _ => None,
                };
                let mut ok = false;
                for end in expansion_ends(*op, rest, next) {
                    let mark = found.len();
                    if let Some(values) = split(*op, vars, &rest[..end]) {
                        found.extend(values);
                        if self.match_from(uri, part + 1, pos + end, failed, found) {
                            ok = true;
                            break;
                        }
                    }
                    found.truncate(mark);
                }
                ok
            }
        };
        if !matched {
            failed.insert((part, pos));
        }
        matched
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Where an expansion of an expression with operator `op` at the start of `rest` may end,
/// longest first: a run of admissible characters, cut where the `next` literal (if any)
/// starts; a prefixed expression (`{?q}`, `{/p}`, ...) may also be absent altogether (a simple
/// or reserved one names a required segment).
fn expansion_ends(op: Op, rest: &str, next: Option<&str>) -> Vec<usize> {
    let limit = rest
        .char_indices()
        .find(|&(i, c)| !(op.admits(c) || (i == 0 && op.prefix() == Some(c))))
        .map_or(rest.len(), |(i, _)| i);
    let mut ends: Vec<usize> = rest[..limit]
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .collect();
    ends.reverse();
    if op.prefix().is_some() {
        ends.push(0);
    }
    // A literal next must start right where the expansion ends.
    ends.retain(|&end| next.is_none_or(|l| rest[end..].starts_with(l)));
    ends
}

/// Splits one expression's expansion into its variables' decoded values; `None` when the text
/// cannot be an expansion of the expression.
fn split<'a>(op: Op, vars: &'a [VarSpec], text: &'a str) -> Option<Vec<(&'a str, &'a str)>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    let body = match op.prefix() {
        Some(prefix) => text.strip_prefix(prefix)?,
        None => text,
    };
    if body.is_empty() && !op.named() {
        return None;
    }
    let mut out = Vec::new();
    if op.named() {
        let exploded = vars.iter().any(|v| v.explode);
        for pair in body.split(op.separator()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if let Some(var) = vars.iter().find(|v| v.name == name) {
                let name = var.name.as_str();
                out.push((name, value));
            } else if !exploded {
                return None;
            }
        }
        return Some(out);
    }
    if vars.len() == 1 {
        // One variable: the whole body is its value (an exploded list keeps its separators).
        let var = &vars[0];
        if !var.explode && op.separator() != ',' && body.contains(op.separator()) {
            return None;
        }
        out.push((var.name.as_str(), body));
        return Some(out);
    }
    let pieces: Vec<&str> = body.split(op.separator()).collect();
    if pieces.len() > vars.len() || pieces.iter().any(|p| p.is_empty()) {
        return None;
    }
    for (var, piece) in vars.iter().zip(pieces) {
        out.push((var.name.as_str(), piece));
    }
    Some(out)
}

/// Percent-decodes `text`; a malformed escape or non-UTF-8 result leaves the text as it came.
fn decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return text.to_owned(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(t: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(t)
            .expect("valid template")
            .match_uri(uri)
            .map(|v| {
                v.iter()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect()
            })
    }

    fn pairs(p: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(
            p.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    }

    #[test]
    fn simple_and_multi() {
        assert_eq!(vars("a://{x}", "a://1"), pairs(&[("x", "1")]));
        assert_eq!(
            vars("a://{x,y}", "a://1,2"),
            pairs(&[("x", "1"), ("y", "2")])
        );
        assert_eq!(vars("a://{x}/b", "a://1/2/b"), None);
        assert_eq!(vars("a://{x}", "a://"), None);
    }

    #[test]
    fn reserved_path_query() {
        assert_eq!(
            vars("file:///{+path}", "file:///a/b c"),
            pairs(&[("path", "a/b c")])
        );
        assert_eq!(vars("a://x{/p}", "a://x/seg"), pairs(&[("p", "seg")]));
        assert_eq!(
            vars("a://x{?q,r}", "a://x?q=1&r=two%2Fthree"),
            pairs(&[("q", "1"), ("r", "two/three")])
        );
        assert_eq!(vars("a://x{?q,r}", "a://x"), pairs(&[]));
        assert_eq!(vars("a://x{?q}", "a://x?z=1"), None);
        assert_eq!(vars("a://x{#f}", "a://x#frag"), pairs(&[("f", "frag")]));
        assert_eq!(vars("a://x{.ext}", "a://x.json"), pairs(&[("ext", "json")]));
    }

    #[test]
    fn adversarial_input_stays_fast() {
        let t = UriTemplate::parse("a://{a}{b}{c}{d}{e}{f}z").expect("valid");
        let uri = format!("a://{}", "x".repeat(400));
        assert!(t.match_uri(&uri).is_none());
        let long = format!("a://{}z", "x".repeat(UriTemplate::MAX_MATCH_LEN));
        assert!(t.match_uri(&long).is_none());
    }

    #[test]
    fn refuses_malformed() {
        assert!(UriTemplate::parse("a://{x").is_err());
        assert!(UriTemplate::parse("a://{x y}").is_err());
        assert!(UriTemplate::parse("a://{=x}").is_err());
    }
}
