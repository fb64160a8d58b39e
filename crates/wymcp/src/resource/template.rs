//! [`UriTemplate`]: an RFC 6570 URI template, validated by `iri-string`, matched against URIs.

use std::collections::{BTreeMap, HashSet};
use std::fmt;

use iri_string::template::UriTemplateStr;

use matcher::{Binding, Reading, Search, decode, is_escape, less_cut};

mod matcher;

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
    /// A prefix modifier's length (`{id:3}`).
    max: Option<usize>,
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
    /// The variables named in more than one place, which must take one value.
    repeated: HashSet<String>,
}

/// The variables a template names: in the order first named, and those named more than once.
#[derive(Default)]
struct Names {
    variables: Vec<String>,
    seen: HashSet<String>,
    repeated: HashSet<String>,
}

impl Names {
    fn note(&mut self, name: &str) {
        if self.seen.insert(name.to_owned()) {
            self.variables.push(name.to_owned());
        } else {
            self.repeated.insert(name.to_owned());
        }
    }
}

/// The expression `{body}`: its operator and its variable specs (`name`, `name*`,
/// `name:max`), each name noted in `names`.
fn expression(body: &str, names: &mut Names) -> Part {
    let mut chars = body.chars();
    let (op, list) = match chars.next().and_then(Op::from_char) {
        Some(op) => (op, chars.as_str()),
        None => (Op::Simple, body),
    };
    let vars = list
        .split(',')
        .map(|spec| {
            let (name, explode, max) = match spec.strip_suffix('*') {
                Some(name) => (name, true, None),
                None => match spec.split_once(':') {
                    Some((name, max)) => (name, false, max.parse().ok()),
                    None => (spec, false, None),
                },
            };
            names.note(name);
            VarSpec {
                name: name.to_owned(),
                explode,
                max,
            }
        })
        .collect();
    Part::Expression { op, vars }
}

impl UriTemplate {
    /// The longest URI, in bytes, that [`match_uri`](Self::match_uri) tries to match (a
    /// server's own is [`Limits::max_template_uri`](crate::Limits::max_template_uri)).
    pub const MAX_MATCH_LEN: usize = crate::limits::DEFAULT_MAX_TEMPLATE_URI;

    /// The most places one reading of [`match_uri`](Self::match_uri) tries an expression's end
    /// at, over the whole search: a URI built to make the search explore (`{a}{b}{c}z` against
    /// thousands of `x`s) matches no template once they are spent, rather than costing time
    /// quadratic in its length (a server's own is
    /// [`Limits::max_template_match_steps`](crate::Limits::max_template_match_steps)).
    pub const MAX_MATCH_STEPS: usize = crate::limits::DEFAULT_MAX_TEMPLATE_MATCH_STEPS;

    /// Parses `template`; the error is the parser's reason.
    pub fn parse(template: &str) -> Result<UriTemplate, String> {
        // iri-string 0.7.14 panics on a `%` whose second character is not ASCII (`%2é`): it
        // splits the string two bytes on. Escapes are checked here first.
        if let Some(at) = bad_escape(template) {
            return Err(format!(
                "invalid percent-encoding at byte {at}: `%` must be followed by two hex digits"
            ));
        }
        UriTemplateStr::new(template).map_err(|e| e.to_string())?;
        let mut parts = Vec::new();
        let mut names = Names::default();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest
                        .find('}')
                        .ok_or_else(|| "unclosed expression".to_owned())?;
                    parts.push(expression(&rest[1..end], &mut names));
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
            variables: names.variables,
            repeated: names.repeated,
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

    /// The variables `uri` matches this template with, or `None` when it does not match
    /// ([`try_match`](Self::try_match) says why not).
    ///
    /// The reading that expansion round-trips through comes first: a value holds only what an
    /// expansion would emit there, so `{.id}{;x}` reads `.v;x=w` as `id = "v"` and `x = "w"`.
    /// Only when that finds nothing may a value hold raw reserved characters a client left
    /// unencoded (not `/`, `?` or `#`, which end a segment). A variable named twice takes one
    /// value. Where several readings exist, an expression takes the longest value that leaves
    /// a match for the rest (`{name}{.ext}` reads `report.tar.gz` whole as `name`, since `.`
    /// is unreserved; `{name}.{ext}` splits it at the last `.`). The search is memoized; a URI
    /// longer than [`MAX_MATCH_LEN`](Self::MAX_MATCH_LEN) bytes, or one that needs more than
    /// [`MAX_MATCH_STEPS`](Self::MAX_MATCH_STEPS) steps of a reading, matches no template.
    ///
    /// ```
    /// use wymcp::resource::UriTemplate;
    ///
    /// let template = UriTemplate::parse("test://{name}.{ext}").unwrap();
    /// let vars = template.match_uri("test://report.tar.gz").unwrap();
    /// assert_eq!((vars.get("name"), vars.get("ext")), (Some("report.tar"), Some("gz")));
    /// let greedy = UriTemplate::parse("test://{name}{.ext}").unwrap();
    /// let vars = greedy.match_uri("test://report.tar.gz").unwrap();
    /// assert_eq!((vars.get("name"), vars.get("ext")), (Some("report.tar.gz"), None));
    /// let users = UriTemplate::parse("users://{id}").unwrap();
    /// assert_eq!(users.match_uri("users://ada@example.com").unwrap().get("id"), Some("ada@example.com"));
    /// let twice = UriTemplate::parse("pair://{id}/{id}").unwrap();
    /// assert!(twice.match_uri("pair://1/2").is_none());
    /// ```
    pub fn match_uri(&self, uri: &str) -> Option<Variables> {
        self.try_match(uri).ok()
    }

    /// [`match_uri`](Self::match_uri), with the reason a URI matched nothing.
    ///
    /// ```
    /// use wymcp::resource::{MatchError, UriTemplate};
    ///
    /// let template = UriTemplate::parse("a://{x}").unwrap();
    /// assert_eq!(template.try_match("b://1"), Err(MatchError::NoMatch));
    /// let long = format!("a://{}", "x".repeat(UriTemplate::MAX_MATCH_LEN));
    /// assert_eq!(template.try_match(&long), Err(MatchError::TooLong { max: UriTemplate::MAX_MATCH_LEN }));
    /// ```
    pub fn try_match(&self, uri: &str) -> Result<Variables, MatchError> {
        self.try_match_within(uri, Self::MAX_MATCH_LEN, Self::MAX_MATCH_STEPS)
    }

    /// [`try_match`](Self::try_match) with its own bounds: URIs up to `max_len` bytes, and
    /// `max_steps` steps per reading (what a server uses, from its
    /// [`Limits`](crate::Limits)).
    ///
    /// ```
    /// use wymcp::resource::{MatchError, UriTemplate};
    ///
    /// let template = UriTemplate::parse("a://{x}").unwrap();
    /// assert_eq!(template.try_match_within("a://12345", 6, 100), Err(MatchError::TooLong { max: 6 }));
    /// assert_eq!(template.try_match_within("a://1", 6, 100).unwrap().get("x"), Some("1"));
    /// ```
    pub fn try_match_within(
        &self,
        uri: &str,
        max_len: usize,
        max_steps: usize,
    ) -> Result<Variables, MatchError> {
        if uri.len() > max_len {
            return Err(MatchError::TooLong { max: max_len });
        }
        let search =
            |reading| Search::new(&self.parts, &self.repeated, uri, reading, max_steps).run();
        let out_of_steps = MatchError::OutOfSteps { max: max_steps };
        // A strict search that ran out of steps ends the match: a lenient one admits more.
        let found = match search(Reading::Strict) {
            Ok(found) => found,
            Err(true) => return Err(out_of_steps),
            Err(false) => search(Reading::Lenient).map_err(|spent| match spent {
                true => out_of_steps,
                false => MatchError::NoMatch,
            })?,
        };
        // A variable named several times reports its least cut value (`{x:1}{x}`: the second).
        let mut chosen: BTreeMap<&str, Binding<'_>> = BTreeMap::new();
        for binding in found.into_iter().filter(|b| b.value.is_some()) {
            match chosen.get(binding.name) {
                Some(earlier) if !less_cut(&binding, earlier) => {}
                _ => {
                    chosen.insert(binding.name, binding);
                }
            }
        }
        let decoded = chosen
            .into_iter()
            .filter_map(|(name, b)| Some((name.to_owned(), decode(b.value?))));
        Ok(Variables(decoded.collect()))
    }
}

/// The byte offset of the first `%` not followed by two ASCII hex digits.
fn bad_escape(text: &str) -> Option<usize> {
    // A `%` is one byte, so its offset is a character boundary.
    text.match_indices('%')
        .map(|(i, _)| i)
        .find(|&i| !is_escape(&text[i..]))
}

/// Why a URI matched no template ([`UriTemplate::try_match`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MatchError {
    /// No values of the variables expand to the URI.
    #[error("the URI does not match the template")]
    NoMatch,
    /// The URI is longer than the most bytes matched ([`UriTemplate::MAX_MATCH_LEN`] unless
    /// set).
    #[error("the URI is longer than {max} bytes, the most a template is matched against")]
    TooLong {
        /// The limit.
        max: usize,
    },
    /// The search ran out of its steps ([`UriTemplate::MAX_MATCH_STEPS`] unless set) before it
    /// found a reading.
    #[error("matching the URI took more than {max} steps of the search")]
    OutOfSteps {
        /// The limit.
        max: usize,
    },
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests;
