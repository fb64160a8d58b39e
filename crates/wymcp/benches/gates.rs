//! The dispatch gates' cost: a valid call through every gate into a trivial `run_action`, and
//! each gate's refusal, on a realistic action (ten properties, one nested object, one array of
//! objects, two formats).
//!
//! Run: `cargo bench -p wymcp --bench gates`.
//!
//! `floor` is what any server that validates this call's `data` with `jsonschema` pays before its
//! own code: the action's schema (as the gate compiled it) checked by a plain `jsonschema`
//! validator, then the data freed, as a call consumes it. It is the gate benchmark's baseline,
//! as the bare handler is the load benchmark's: `valid_call_warm_arguments` less `floor` is
//! wymcp's own share.
//!
//! For instruction counts (callgrind), `GATES_CALLS=<n>` skips criterion and makes `n` valid
//! calls (with `GATES_FLOOR=1`, `n` floor runs): the inclusive cost of `one_call` (or `floor`)
//! divided by `n` is the instructions of one, copying the input left out, as criterion leaves
//! it out of its timing (`bench/gates-instructions.sh` does exactly that).

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{self, Poll, Waker};

use criterion::{BatchSize, Bencher, Criterion, criterion_group};
use serde_json::{Value, json};
use wymcp::{ActionResult, ActionSchema, ActionTool, Actions, Context, Data, Reply, Server};
use wymcp_core::validate_actions;
use wymcp_core::value_gate;

struct Orders;

impl ActionTool for Orders {
    fn name(&self) -> &str {
        "orders"
    }

    fn description(&self) -> &str {
        "Order management"
    }

    fn actions(&self) -> Actions {
        Actions::new()
            .action(
                "create",
                ActionSchema::new("Create an order")
                    .property("name", json!({"type": "string", "minLength": 1}))
                    .property(
                        "sku",
                        json!({"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"}),
                    )
                    .property(
                        "quantity",
                        json!({"type": "integer", "minimum": 1, "maximum": 1000}),
                    )
                    .property("price", json!({"type": "number", "exclusiveMinimum": 0}))
                    .property("email", json!({"type": "string", "format": "email"}))
                    .property(
                        "created_at",
                        json!({"type": "string", "format": "date-time"}),
                    )
                    .property(
                        "tags",
                        json!({"type": "array", "items": {"type": "string"}, "maxItems": 20}),
                    )
                    .property(
                        "address",
                        json!({"type": "object", "properties": {
                            "street": {"type": "string"},
                            "city": {"type": "string"},
                            "zip": {"type": "string", "maxLength": 10},
                            "country": {"enum": ["SE", "FI", "NO"]}
                        }, "required": ["city"]}),
                    )
                    .property(
                        "lines",
                        json!({"type": "array", "items": {"type": "object", "properties": {
                            "sku": {"type": "string"},
                            "qty": {"type": "integer", "minimum": 1}
                        }, "required": ["sku", "qty"]}}),
                    )
                    .property("active", json!({"type": "boolean"}))
                    .required(["name", "sku"])
                    .required_one_of([["email"], ["address"]])
                    .default_value("active", json!(true)),
            )
            .action(
                "get",
                ActionSchema::new("Get an order")
                    .property("id", json!({"type": "integer"}))
                    .required(["id"]),
            )
            .action("list", ActionSchema::new("List orders"))
    }

    async fn run_action(&self, _action: &str, data: Data, _ctx: Context) -> ActionResult {
        Ok(Reply::new(json!({"ok": true, "keys": data.len()})))
    }
}

fn valid_data() -> Value {
    json!({
        "name": "Bolts",
        "sku": "BLT-0042",
        "quantity": 12,
        "price": 3.5,
        "email": "buyer@example.com",
        "created_at": "2026-03-01T12:00:00Z",
        "tags": ["hardware", "bulk"],
        "address": {"street": "Main St 1", "city": "Turku", "zip": "20100", "country": "FI"},
        "lines": [
            {"sku": "BLT-0042", "qty": 10},
            {"sku": "NUT-0042", "qty": 10},
            {"sku": "WSH-0042", "qty": 20}
        ]
    })
}

fn with_data(mutate: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Value {
    let mut data = valid_data();
    if let Value::Object(map) = &mut data {
        mutate(map);
    }
    json!({"action": "create", "data": data})
}

fn cases() -> Vec<(&'static str, Value, bool)> {
    vec![
        ("valid_call", with_data(|_| {}), false),
        (
            "gate1_unknown_arguments",
            json!({"action": "create", "dta": {}}),
            true,
        ),
        (
            "gate2_invalid_argument_type",
            json!({"action": "create", "data": "x"}),
            true,
        ),
        ("gate3_missing_action", json!({"data": valid_data()}), true),
        (
            "gate4_unknown_action",
            json!({"action": "craete", "data": valid_data()}),
            true,
        ),
        (
            "gate5_missing_required_fields",
            with_data(|d| {
                d.remove("sku");
            }),
            true,
        ),
        (
            "gate6_missing_required_group",
            with_data(|d| {
                d.remove("email");
                d.remove("address");
            }),
            true,
        ),
        (
            "gate7_unknown_params",
            with_data(|d| {
                if let Some(Value::Array(lines)) = d.get_mut("lines") {
                    lines[1]["skuu"] = json!("typo");
                }
            }),
            true,
        ),
        (
            "gate8_invalid_values",
            with_data(|d| {
                d.insert("created_at".into(), json!("yesterday"));
                d.insert("quantity".into(), json!(0));
            }),
            true,
        ),
    ]
}

/// The bench server, a current-thread runtime and a context: what every run needs.
fn setup() -> (Server, tokio::runtime::Runtime, Context) {
    let server = Server::builder()
        .tool(Orders)
        .build()
        .expect("the bench tool builds");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a current-thread runtime");
    (server, runtime, Context::default())
}

fn gates(c: &mut Criterion) {
    let (server, runtime, ctx) = setup();
    let mut group = c.benchmark_group("tools_call");
    for (name, arguments, refused) in cases() {
        // Check the case does what its name says before timing it.
        let result = runtime
            .block_on(wymcp::testing::call_tool(
                &server,
                "orders",
                Some(arguments.clone()),
                ctx.clone(),
            ))
            .expect("reaches the tool");
        assert_eq!(result.is_error(), refused, "{name}: {:?}", result.text());
        if let Some(gate) = name.split_once('_').map(|(_, error)| error) {
            if refused {
                let body = result.json().expect("a JSON payload");
                assert_eq!(body["error"], gate, "{name}");
            }
        }
        group.bench_function(name, |b| {
            time_calls(
                b,
                (&server, &runtime, &ctx),
                &arguments,
                BatchSize::SmallInput,
            );
        });
    }
    // The valid call again, its arguments copied just before each call (criterion times each
    // call alone): warm in cache, as a server's arguments are, parsed from the body just
    // before. `SmallInput` above copies thousands of argument sets first, so each timed call
    // starts on cold memory.
    let arguments = with_data(|_| {});
    group.bench_function("valid_call_warm_arguments", |b| {
        time_calls(
            b,
            (&server, &runtime, &ctx),
            &arguments,
            BatchSize::PerIteration,
        );
    });
    let (validator, data) = floor_setup();
    group.bench_function("floor", |b| {
        b.iter_batched(
            || data.clone(),
            |data| floor(&validator, data),
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// The floor's validator, built from the schema the gate of `orders/create` compiled (with
/// wymcp's validator options), and the valid call's `data`.
fn floor_setup() -> (jsonschema::Validator, Value) {
    let actions = validate_actions(&Orders.actions()).expect("the bench actions validate");
    let create = actions.get("create").expect("orders has create");
    let validator =
        value_gate::build(create.value_gate().schema()).expect("the gate's schema builds");
    (validator, valid_data())
}

/// What a call cannot avoid: the data checked by `jsonschema`, then freed (never inlined, like
/// [`one_call`]).
#[inline(never)]
fn floor(validator: &jsonschema::Validator, data: Value) -> bool {
    let valid = validator.is_valid(&data);
    drop(data);
    black_box(valid)
}

/// Times `orders` calls on copies of `arguments`, made in batches of `size` (untimed).
fn time_calls(
    b: &mut Bencher<'_>,
    (server, runtime, ctx): (&Server, &tokio::runtime::Runtime, &Context),
    arguments: &Value,
    size: BatchSize,
) {
    b.iter_batched(
        || arguments.clone(),
        |arguments| one_call((server, runtime, ctx), arguments),
        size,
    );
}

/// One `orders` call: what the benchmark times, and what `bench/gates-instructions.sh` counts
/// (never inlined, so callgrind sees it whole).
///
/// The call's future is polled once, inside the runtime's context, as a server's request task
/// polls it; `block_on` only if it is not ready then. A `block_on` per call would add tokio's
/// entry into the runtime (about 1.1k instructions), which no server pays per call.
#[inline(never)]
fn one_call(
    (server, runtime, ctx): (&Server, &tokio::runtime::Runtime, &Context),
    arguments: Value,
) -> Result<wymcp::tool::CallToolResult, wymcp::RpcError> {
    let _entered = runtime.enter();
    let mut call = pin!(wymcp::testing::call_tool(
        server,
        "orders",
        Some(arguments),
        ctx.clone()
    ));
    let result = match call
        .as_mut()
        .poll(&mut task::Context::from_waker(Waker::noop()))
    {
        Poll::Ready(result) => result,
        Poll::Pending => runtime.block_on(call),
    };
    black_box(result)
}

/// `n` floor runs and nothing else, for callgrind.
fn floor_runs(n: usize) {
    let (validator, data) = floor_setup();
    for _ in 0..n {
        assert!(floor(&validator, data.clone()));
    }
}

/// `n` valid calls and nothing else, for callgrind.
fn valid_calls(n: usize) {
    let (server, runtime, ctx) = setup();
    let arguments = with_data(|_| {});
    for _ in 0..n {
        let result =
            one_call((&server, &runtime, &ctx), arguments.clone()).expect("reaches the tool");
        assert!(!result.is_error());
    }
}

criterion_group!(benches, gates);

fn main() {
    match std::env::var("GATES_CALLS") {
        Ok(n) => {
            let n = n.parse().expect("GATES_CALLS is a number of calls");
            if std::env::var_os("GATES_FLOOR").is_some() {
                floor_runs(n);
            } else {
                valid_calls(n);
            }
        }
        Err(_) => {
            benches();
            Criterion::default().configure_from_args().final_summary();
        }
    }
}
