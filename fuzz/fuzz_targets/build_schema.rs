//! Schema validation at build time: an arbitrary action map, or an arbitrary plain input
//! schema → `build()` accepts, or refuses with an error that names the tool (and the action,
//! for an action's problem); never a panic. The validator the macros run at compile time
//! (`wymcp_core::validate_actions`, `InputSchema::build`) reaches the same verdict, with the
//! same problem.
#![no_main]

use arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use wymcp::{ActionResult, ActionTool, Actions, CallResult, CallOutput, Context, Data, PlainTool, Reply, Server};
use wymcp_core::ACTION_SCHEMA_KEYS;
use wymcp_core::schema::InputSchema;
use wymcp_fuzz::{json as genjson, schemagen};

struct Mapped(Value);

impl ActionTool for Mapped {
    fn name(&self) -> &str {
        "mapped"
    }
    fn description(&self) -> &str {
        "A generated action map"
    }
    fn actions(&self) -> Actions {
        Actions::from_value(self.0.clone())
    }
    async fn run_action(&self, _action: &str, _data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({})))
    }
}

struct Plain(Map<String, Value>);

impl PlainTool for Plain {
    fn name(&self) -> &str {
        "plain"
    }
    fn description(&self) -> &str {
        "A generated input schema"
    }
    fn input_schema(&self) -> Map<String, Value> {
        self.0.clone()
    }
    async fn run(&self, _arguments: Map<String, Value>, _ctx: Context) -> CallResult {
        Ok(CallOutput::text("ok"))
    }
}

const ACTION_NAMES: [&str; 4] = ["add", "get", "", "two\nlines"];

fn action(u: &mut Unstructured) -> Result<Value> {
    let mut values = Vec::new();
    let mut map = Map::new();
    for key in ACTION_SCHEMA_KEYS {
        if !u.ratio(1u8, 2)? {
            continue;
        }
        let value = match key {
            "description" => json!(genjson::string(u)?),
            "properties" => {
                let mut props = Map::new();
                for name in schemagen::NAMES.iter().take(u.int_in_range(0..=3usize)?) {
                    props.insert((*name).to_owned(), schemagen::property(u, 2, &mut values)?);
                }
                Value::Object(props)
            }
            "required" | "related" => {
                let pool: &[&str] = if key == "related" { &ACTION_NAMES } else { &schemagen::NAMES };
                json!([*u.choose(pool)?, *u.choose(pool)?])
            }
            "required_one_of" => json!([[*u.choose(&schemagen::NAMES)?], [*u.choose(&schemagen::NAMES)?]]),
            "defaults" => {
                let mut d = Map::new();
                d.insert((*u.choose(&schemagen::NAMES)?).to_owned(), schemagen::data_value(u, &values, 1)?);
                Value::Object(d)
            }
            "examples" => json!([schemagen::data_value(u, &values, 2)?]),
            _ => genjson::value(u, 1)?,
        };
        map.insert(key.to_owned(), if u.ratio(1u8, 12)? { genjson::value(u, 1)? } else { value });
    }
    if u.ratio(1u8, 12)? {
        map.insert(genjson::string(u)?, genjson::value(u, 1)?);
    }
    Ok(Value::Object(map))
}

fn actions(u: &mut Unstructured) -> Result<Value> {
    if u.ratio(1u8, 16)? {
        return genjson::value(u, 2);
    }
    let mut map = Map::new();
    for name in ACTION_NAMES.iter().take(u.int_in_range(0..=3usize)?) {
        map.insert((*name).to_owned(), action(u)?);
    }
    Ok(Value::Object(map))
}

fuzz_target!(|bytes: &[u8]| {
    let mut u = Unstructured::new(bytes);
    let Ok(plain) = u.arbitrary::<bool>() else { return };
    if plain {
        let mut values = Vec::new();
        let Ok(Value::Object(mut schema)) = schemagen::property(&mut u, 3, &mut values) else { return };
        if u.arbitrary().unwrap_or(true) {
            schema.insert("type".into(), json!("object"));
        }
        let compile_time = InputSchema::build(&schema).err();
        let built = Server::builder().plain_tool(Plain(schema.clone())).build().err();
        assert_eq!(
            compile_time.as_ref().map(ToString::to_string),
            built.as_ref().map(|e| e.problem().to_string()),
            "the compile-time and build() verdicts differ for {}", Value::Object(schema)
        );
        if let Some(e) = built {
            assert_eq!(e.tool(), Some("plain"), "the refusal does not name the tool: {e}");
        }
        return;
    }
    let Ok(map) = actions(&mut u) else { return };
    let compile_time = wymcp_core::validate_actions(&Actions::from_value(map.clone())).err();
    let built = Server::builder().tool(Mapped(map.clone())).build().err();
    assert_eq!(
        compile_time.as_ref().map(|e| (e.problem().clone(), e.action().map(str::to_owned))),
        built.as_ref().map(|e| (e.problem().clone(), e.action().map(str::to_owned))),
        "the compile-time and build() verdicts differ for {map}"
    );
    if let Some(e) = built {
        assert_eq!(e.tool(), Some("mapped"), "the refusal does not name the tool: {e}");
        let text = e.to_string();
        assert!(text.contains("\"mapped\""), "the message does not name the tool: {text}");
    }
});
