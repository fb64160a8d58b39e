//! Data paths as RFC 6901 JSON Pointers: `data` itself is `""`, then `/address/zip`,
//! `/items/0/sku`. One renderer serves every refusal that names a place in `data`.

/// Appends one reference token (an object key or an array index) to a pointer, escaping `~` as
/// `~0` and `/` as `~1`.
///
/// ```
/// use wymcp_core::pointer::push;
///
/// assert_eq!(push("", "address"), "/address");
/// assert_eq!(push("/a", "b/c~d"), "/a/b~1c~0d");
/// ```
pub fn push(pointer: &str, token: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + token.len() + 1);
    out.push_str(pointer);
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// Appends an array index to a pointer.
pub fn push_index(pointer: &str, index: usize) -> String {
    format!("{pointer}/{index}")
}

/// One step of a data path, kept borrowed while walking so a pointer is only rendered for the
/// places a refusal names (a passing call renders none).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Renders a path of steps as a JSON Pointer.
pub(crate) fn render(steps: &[Step<'_>]) -> String {
    steps.iter().fold(String::new(), |acc, step| match step {
        Step::Key(k) => push(&acc, k),
        Step::Index(i) => push_index(&acc, *i),
    })
}

/// The reference tokens of a JSON Pointer, unescaped (`~1` as `/`, `~0` as `~`): the inverse of
/// [`push`]. `""` has none.
///
/// ```
/// use wymcp_core::pointer::tokens;
///
/// assert_eq!(tokens("/a/b~1c~0d/0").collect::<Vec<_>>(), ["a", "b/c~d", "0"]);
/// assert_eq!(tokens("").count(), 0);
/// ```
pub fn tokens(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
}
