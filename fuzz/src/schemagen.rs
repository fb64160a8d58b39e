//! Arbitrary JSON Schemas for action properties and plain tools' input schemas: mostly the
//! keywords tools use, sometimes anything, and the values worth sending against them.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Value, json};

use crate::json;

/// Property names the generated schemas use (and the generated data sends).
pub const NAMES: [&str; 5] = ["a", "b", "n", "when", "items"];

const PATTERNS: &[&str] = &["^[a-z]{3}$", "^\\d+$", "a|b", "(", "^(a+)+$", "\\p{L}", ""];
const FORMATS: &[&str] = &["email", "date", "date-time", "uri", "ipv4", "uuid", "regex", "no-such-format"];

/// A property schema, at most `depth` levels deep; its literal values go into `values`.
pub fn property(u: &mut Unstructured, depth: u8, values: &mut Vec<Value>) -> Result<Value> {
    let choice = u.int_in_range(0..=if depth == 0 { 6 } else { 10 })?;
    let mut schema = match choice {
        0 => string(u, values)?,
        1 => number(u, "integer", values)?,
        2 => number(u, "number", values)?,
        3 => json!({"type": "boolean"}),
        4 => {
            let n = u.int_in_range(1..=3usize)?;
            let mut items = Vec::new();
            for _ in 0..n {
                items.push(json::value(u, 1)?);
            }
            values.extend(items.iter().cloned());
            json!({"enum": items})
        }
        5 => {
            let c = json::value(u, 1)?;
            values.push(c.clone());
            json!({"const": c})
        }
        6 => json!({"type": [*u.choose(&["string", "integer", "number"])?, "null"]}),
        7 => json!({
            "type": "array",
            "items": property(u, depth - 1, values)?,
            "maxItems": u.int_in_range(0..=4u8)?,
            "uniqueItems": u.arbitrary::<bool>()?
        }),
        8 => {
            let mut properties = Map::new();
            for name in NAMES.iter().take(u.int_in_range(0..=3usize)?) {
                properties.insert((*name).to_owned(), property(u, depth - 1, values)?);
            }
            let mut object = json!({"type": "object", "properties": properties});
            if u.arbitrary()? {
                object["additionalProperties"] = json!(u.arbitrary::<bool>()?);
            }
            if u.arbitrary()? {
                object["required"] = json!([*u.choose(&NAMES)?]);
            }
            object
        }
        9 => {
            let keyword = *u.choose(&["anyOf", "oneOf", "allOf"])?;
            json!({keyword: [property(u, depth - 1, values)?, property(u, depth - 1, values)?]})
        }
        _ => json!({"not": property(u, depth - 1, values)?}),
    };
    if u.ratio(1u8, 10)? {
        // Any keyword at all, any value: where build() must refuse cleanly.
        let key = json::string(u)?;
        schema[key] = json::value(u, 1)?;
    }
    Ok(schema)
}

fn string(u: &mut Unstructured, values: &mut Vec<Value>) -> Result<Value> {
    let mut s = json!({"type": "string"});
    if u.arbitrary()? {
        s["minLength"] = json!(u.int_in_range(0..=3u8)?);
    }
    if u.arbitrary()? {
        s["maxLength"] = json!(u.int_in_range(0..=8u8)?);
    }
    if u.ratio(1u8, 3)? {
        s["pattern"] = json!(*u.choose(PATTERNS)?);
    }
    if u.ratio(1u8, 3)? {
        s["format"] = json!(*u.choose(FORMATS)?);
    }
    values.extend(["abc", "123", "", "a@b.co", "2026-12-01", "10.0.0.1", "x"].map(|v| json!(v)));
    Ok(s)
}

fn number(u: &mut Unstructured, kind: &str, values: &mut Vec<Value>) -> Result<Value> {
    let mut s = json!({"type": kind});
    if u.arbitrary()? {
        let min = u.int_in_range(-5i64..=5)?;
        s["minimum"] = json!(min);
        values.push(json!(min));
    }
    if u.arbitrary()? {
        let max = u.int_in_range(-5i64..=50)?;
        s["maximum"] = json!(max);
        values.push(json!(max));
    }
    if u.ratio(1u8, 4)? {
        s["multipleOf"] = json!(*u.choose(&[2, 3])?);
    }
    values.extend([json!(2.0), json!(1.5), json!(1e20), json!(-0.0), json!(7)]);
    Ok(s)
}

/// A value to send: one the schema names, or an arbitrary one, at most `depth` deep.
pub fn data_value(u: &mut Unstructured, values: &[Value], depth: u8) -> Result<Value> {
    if !values.is_empty() && u.ratio(2u8, 3)? {
        return Ok(u.choose(values)?.clone());
    }
    if depth > 0 && u.ratio(1u8, 4)? {
        let mut map = Map::new();
        for _ in 0..u.int_in_range(0..=2usize)? {
            map.insert((*u.choose(&NAMES)?).to_owned(), data_value(u, values, depth - 1)?);
        }
        return Ok(Value::Object(map));
    }
    if depth > 0 && u.ratio(1u8, 4)? {
        let mut items = Vec::new();
        for _ in 0..u.int_in_range(0..=3usize)? {
            items.push(data_value(u, values, depth - 1)?);
        }
        return Ok(Value::Array(items));
    }
    json::value(u, 1)
}
