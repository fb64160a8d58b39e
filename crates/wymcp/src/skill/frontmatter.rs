//! A `SKILL.md`'s YAML frontmatter, read as the JSON object `skills/list` carries verbatim.

use serde_json::{Map, Value};

use super::SkillError;

/// The most bytes of frontmatter parsed: a skill's metadata, not a document.
const MAX_FRONTMATTER: usize = 64 * 1024;

/// The frontmatter of `skill_md`: the YAML between the opening `---` line and the next
/// `---` line, as a JSON object, with a non-empty string `name` and `description`.
pub(crate) fn parse(skill_md: &str) -> Result<Map<String, Value>, SkillError> {
    let yaml = block(skill_md).ok_or(SkillError::NoFrontmatter)?;
    if yaml.len() > MAX_FRONTMATTER {
        return Err(SkillError::Frontmatter(format!(
            "{} bytes, more than the {MAX_FRONTMATTER} a frontmatter may have",
            yaml.len()
        )));
    }
    let value: Value =
        serde_norway::from_str(yaml).map_err(|e| SkillError::Frontmatter(e.to_string()))?;
    let Value::Object(map) = value else {
        return Err(SkillError::Frontmatter("it is not a mapping".into()));
    };
    for field in ["name", "description"] {
        match map.get(field) {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => return Err(SkillError::MissingField(field)),
        }
    }
    Ok(map)
}

/// The text between the opening `---` line and the closing one (a leading byte-order mark
/// and `\r\n` line ends allowed).
fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line
            .trim_end_matches(['\r', '\n'])
            .trim_end_matches([' ', '\t'])
            == "---"
        {
            return Some(rest[..offset].trim_end_matches(['\r', '\n']));
        }
        offset += line.len();
    }
    None
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 characters of `a-z`, `0-9`
/// and `-`, not starting or ending with `-`, no `--`.
pub(crate) fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_block_verbatim_as_json() {
        let md = "\u{feff}---\r\nname: pdf-tools\r\ndescription: Fill PDF forms\r\nmetadata:\r\n  version: 2.1\r\nlicense: MIT\r\n---\r\n# Body\n";
        let map = parse(md).expect("valid");
        assert_eq!(
            Value::Object(map),
            json!({"name": "pdf-tools", "description": "Fill PDF forms",
                   "metadata": {"version": 2.1}, "license": "MIT"})
        );
    }

    #[test]
    fn refuses_what_a_skill_may_not_be() {
        let cases = [
            (
                "# no frontmatter",
                "SKILL.md does not begin with YAML frontmatter between two '---' lines",
            ),
            (
                "---\nname: a\n",
                "SKILL.md does not begin with YAML frontmatter between two '---' lines",
            ),
            (
                "---\n- a\n- b\n---\n",
                "SKILL.md frontmatter is not a YAML mapping: it is not a mapping",
            ),
            (
                "---\nname: a\n---\n",
                "SKILL.md frontmatter needs a non-empty string \"description\"",
            ),
            (
                "---\nname: ''\ndescription: d\n---\n",
                "SKILL.md frontmatter needs a non-empty string \"name\"",
            ),
        ];
        for (md, message) in cases {
            assert_eq!(parse(md).expect_err(md).to_string(), message);
        }
        assert!(parse("---\nname: [unclosed\n---\n").is_err());
    }

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["a", "git-workflow", "pdf2", &"a".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "Git", "a_b", "a.b", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
