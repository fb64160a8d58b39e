//! [`Refusal`]: each gate's answer, carrying its error name, payload and classification in one
//! place. Every payload quotes the caller only through bounded echo, so its size is bounded by a
//! constant whatever the call carried.

use serde_json::{Map, Value, json};
use wymcp_core::bound;
use wymcp_core::keyset::UnknownKeys;
use wymcp_core::pointer;
use wymcp_core::value_gate::InvalidValues;

use crate::dispatch::choices::ActionChoices;
use crate::dispatch::schemas::PropertySchemas;

/// The help call that explains a surface: `help {}`, `help {tool: "t"}`,
/// `help {tool: "t", action: "a"}`. The one builder of help pointers.
pub(crate) fn help_pointer(tool: Option<&str>, action: Option<&str>) -> String {
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    match (tool, action) {
        (None, _) => "help {}".to_owned(),
        (Some(t), None) => format!("help {{tool: {}}}", quote(t)),
        (Some(t), Some(a)) => format!("help {{tool: {}, action: {}}}", quote(t), quote(a)),
    }
}

/// Where a data-level refusal points: an action of an action tool, or a plain tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    pub(crate) tool: &'a str,
    pub(crate) action: Option<&'a str>,
}

impl Target<'_> {
    fn pointer(&self) -> String {
        help_pointer(Some(self.tool), self.action)
    }
    fn subject(&self) -> String {
        match self.action {
            Some(a) => format!("action '{a}'"),
            None => format!("tool '{}'", self.tool),
        }
    }
    fn insert_action(&self, payload: &mut Map<String, Value>) {
        if let Some(a) = self.action {
            payload.insert("action".into(), Value::String(a.to_owned()));
        }
    }
}

/// A gate's refusal of a call.
#[derive(Debug)]
pub(crate) enum Refusal<'a> {
    /// Gate 1: argument keys outside the vocabulary.
    UnknownArguments {
        unknown: Vec<String>,
        vocabulary: &'static [&'static str],
        help: String,
    },
    /// Gate 2: an argument of the wrong JSON type.
    InvalidArgumentType {
        argument: &'static str,
        expected: &'static str,
        help: String,
    },
    /// Gate 3: no action.
    MissingAction {
        tool: &'a str,
        valid: ActionChoices<'a>,
    },
    /// Gate 4 (and help): an action the tool does not declare.
    UnknownAction {
        tool: &'a str,
        sent: &'a str,
        valid: ActionChoices<'a>,
    },
    /// Gate 5: required properties absent.
    MissingRequiredFields {
        target: Target<'a>,
        missing: Vec<&'a str>,
        digest: &'a Value,
        schemas: PropertySchemas<'a>,
    },
    /// Gate 6: no required_one_of group fully present.
    MissingRequiredGroup {
        target: Target<'a>,
        groups: &'a [Vec<String>],
        /// The groups' members the call lacks, each once, in the groups' order.
        absent: Vec<&'a str>,
        digest: &'a Value,
        schemas: PropertySchemas<'a>,
    },
    /// Gate 7: keys outside a closed object.
    UnknownParams {
        target: Target<'a>,
        report: UnknownKeys,
        digest: &'a Value,
    },
    /// Gate 8: values their schema refuses.
    InvalidValues {
        target: Target<'a>,
        // Boxed: the report is the largest payload, and a refusal is returned by value.
        report: Box<InvalidValues>,
        digest: &'a Value,
        schemas: PropertySchemas<'a>,
    },
    /// The scope gate: the caller's credentials lack scopes the action or tool declares.
    InsufficientScope {
        target: Target<'a>,
        required: &'a [String],
        missing: Vec<&'a str>,
    },
    /// Help: an action without a tool.
    MissingTool {
        action: &'a str,
        valid: Vec<&'a str>,
    },
    /// Help: a tool the session does not have.
    UnknownTool { sent: &'a str, valid: Vec<&'a str> },
}

impl Refusal<'_> {
    /// The payload's `error` value.
    pub(crate) fn error_name(&self) -> &'static str {
        match self {
            Refusal::UnknownArguments { .. } => "unknown_arguments",
            Refusal::InvalidArgumentType { .. } => "invalid_argument_type",
            Refusal::MissingAction { .. } => "missing_action",
            Refusal::UnknownAction { .. } => "unknown_action",
            Refusal::MissingRequiredFields { .. } => "missing_required_fields",
            Refusal::MissingRequiredGroup { .. } => "missing_required_group",
            Refusal::UnknownParams { .. } => "unknown_params",
            Refusal::InvalidValues { .. } => "invalid_values",
            Refusal::MissingTool { .. } => "missing_tool",
            Refusal::UnknownTool { .. } => "unknown_tool",
            Refusal::InsufficientScope { .. } => "insufficient_scope",
        }
    }

    /// The JSON payload the caller reads.
    pub(crate) fn payload(&self) -> Value {
        let mut p = Map::new();
        p.insert("error".into(), Value::String(self.error_name().to_owned()));
        match self {
            Refusal::UnknownArguments { .. } | Refusal::InvalidArgumentType { .. } => {
                self.argument_fields(&mut p);
            }
            Refusal::MissingAction { .. } | Refusal::UnknownAction { .. } => {
                self.action_fields(&mut p);
            }
            Refusal::MissingTool { .. } | Refusal::UnknownTool { .. } => self.tool_fields(&mut p),
            Refusal::InsufficientScope {
                target,
                required,
                missing,
            } => scope_fields(&mut p, target, required, missing),
            _ => self.data_fields(&mut p),
        }
        Value::Object(p)
    }

    /// The arguments gates (unknown arguments, their types).
    fn argument_fields(&self, p: &mut Map<String, Value>) {
        match self {
            Refusal::UnknownArguments {
                unknown,
                vocabulary,
                help,
            } => {
                let listed = bound::echo_list(unknown.iter().map(String::as_str));
                p.insert(
                    "message".into(),
                    Value::String(format!(
                        "Unknown argument(s): {}. Valid arguments: {}.",
                        listed.join(", "),
                        vocabulary.join(", ")
                    )),
                );
                p.insert("unknown".into(), json!(listed));
                p.insert("unknown_count".into(), json!(unknown.len()));
                p.insert("valid_arguments".into(), json!(vocabulary));
                p.insert("help".into(), Value::String(help.clone()));
            }
            Refusal::InvalidArgumentType {
                argument,
                expected,
                help,
            } => {
                p.insert(
                    "message".into(),
                    Value::String(format!("Argument '{argument}' must be a JSON {expected}.")),
                );
                p.insert("argument".into(), json!(argument));
                p.insert("expected".into(), json!(expected));
                p.insert("help".into(), Value::String(help.clone()));
            }
            _ => {}
        }
    }

    /// The action gates (missing, unknown).
    fn action_fields(&self, p: &mut Map<String, Value>) {
        match self {
            Refusal::MissingAction { tool, valid } => {
                let names = valid.names();
                p.insert(
                    "message".into(),
                    Value::String(format!(
                        "Missing required 'action' argument for tool '{tool}'. Valid actions: {}.",
                        names.join(", ")
                    )),
                );
                p.insert("valid_actions".into(), json!(names));
                valid.insert_into(p);
                p.insert("help".into(), Value::String(help_pointer(Some(tool), None)));
            }
            Refusal::UnknownAction { tool, sent, valid } => {
                let names = valid.names();
                let choices = if valid.is_empty() {
                    "This tool takes no actions.".to_owned()
                } else {
                    format!("Valid actions: {}.", names.join(", "))
                };
                p.insert(
                    "message".into(),
                    Value::String(format!(
                        "Unknown action '{}' for tool '{tool}'. {choices}",
                        bound::echo(sent)
                    )),
                );
                p.insert("valid_actions".into(), json!(names));
                if !valid.is_empty() {
                    valid.insert_into(p);
                }
                p.insert("help".into(), Value::String(help_pointer(Some(tool), None)));
            }
            _ => {}
        }
    }

    /// The data gates (required, required_one_of, unknown keys, values): each names the
    /// action, its input schema and its help.
    fn data_fields(&self, p: &mut Map<String, Value>) {
        match self {
            Refusal::MissingRequiredFields {
                target,
                missing,
                digest,
                schemas,
            } => {
                p.insert(
                    "message".into(),
                    Value::String(format!("Required fields missing: {}", missing.join(", "))),
                );
                p.insert("missing".into(), json!(missing));
                let paths: Vec<String> = missing.iter().map(|m| pointer::push("", m)).collect();
                schemas.insert_into(p, paths.iter().map(String::as_str));
                data_level(p, target, digest);
            }
            Refusal::MissingRequiredGroup {
                target,
                groups,
                absent,
                digest,
                schemas,
            } => {
                let rendered: Vec<String> = groups
                    .iter()
                    .map(|g| format!("({})", g.join(" + ")))
                    .collect();
                p.insert(
                    "message".into(),
                    Value::String(format!(
                        "At least one of these field groups must be fully present: {}",
                        rendered.join(" OR ")
                    )),
                );
                p.insert("required_one_of".into(), json!(groups));
                let paths: Vec<String> = absent.iter().map(|m| pointer::push("", m)).collect();
                schemas.insert_into(p, paths.iter().map(String::as_str));
                data_level(p, target, digest);
            }
            Refusal::UnknownParams {
                target,
                report,
                digest,
            } => {
                p.insert(
                "message".into(),
                Value::String(format!(
                    "Unknown parameter(s) for {}: {}. These are rejected rather than silently ignored.",
                    target.subject(),
                    report.listed.join(", ")
                )),
            );
                p.insert("unknown".into(), json!(report.listed));
                p.insert("unknown_count".into(), json!(report.count));
                p.insert("allowed".into(), json!(report.allowed));
                data_level(p, target, digest);
            }
            Refusal::InvalidValues {
                target,
                report,
                digest,
                schemas,
            } => {
                invalid_values(p, target, report, digest);
                schemas.insert_into(p, report.schema_paths.iter().map(String::as_str));
            }
            _ => {}
        }
    }

    /// `help`'s own refusals (no tool, an unknown tool).
    fn tool_fields(&self, p: &mut Map<String, Value>) {
        match self {
            Refusal::MissingTool { action, valid } => {
                p.insert(
                    "message".into(),
                    Value::String(format!(
                        "help with action '{}' requires a tool. Valid tools: {}.",
                        bound::echo(action),
                        valid.join(", ")
                    )),
                );
                p.insert("valid_tools".into(), json!(valid));
                p.insert("help".into(), Value::String(help_pointer(None, None)));
            }
            Refusal::UnknownTool { sent, valid } => {
                p.insert(
                    "message".into(),
                    Value::String(format!(
                        "Unknown tool '{}'. Valid tools: {}.",
                        bound::echo(sent),
                        valid.join(", ")
                    )),
                );
                p.insert("valid_tools".into(), json!(valid));
                p.insert("help".into(), Value::String(help_pointer(None, None)));
            }
            _ => {}
        }
    }
}

/// `insufficient_scope`: what the call needs, what the caller lacks, and what to do.
fn scope_fields(
    p: &mut Map<String, Value>,
    target: &Target<'_>,
    required: &[String],
    missing: &[&str],
) {
    p.insert(
        "message".into(),
        Value::String(format!(
            "The caller's credentials lack the scope(s) {} that {} of tool '{}' needs. \
             Authorize again with these scopes, then retry.",
            missing.join(", "),
            target.subject(),
            target.tool
        )),
    );
    p.insert("required_scopes".into(), json!(required));
    p.insert("missing_scopes".into(), json!(missing));
    target.insert_action(p);
}

/// `invalid_values`: each invalid path with its problems (the whole data shown as `(data)`).
fn invalid_values(
    p: &mut Map<String, Value>,
    target: &Target<'_>,
    report: &InvalidValues,
    digest: &Value,
) {
    let paths: Vec<&str> = report.listed.iter().map(|i| i.path.as_str()).collect();
    let shown: Vec<String> = paths
        .iter()
        .map(|p| {
            if p.is_empty() {
                "(data)".to_owned()
            } else {
                (*p).to_owned()
            }
        })
        .collect();
    p.insert(
        "message".into(),
        Value::String(format!(
            "Invalid value(s) for {}: {}.",
            target.subject(),
            shown.join(", ")
        )),
    );
    let invalid: Vec<Value> = report
        .listed
        .iter()
        .map(|i| json!({"path": i.path, "problems": i.problems}))
        .collect();
    p.insert("invalid".into(), Value::Array(invalid));
    p.insert("invalid_count".into(), json!(report.count));
    if !report.complete {
        // The value gate stopped at its first problem (see `MAX_REPORTED_VALUES`).
        p.insert("invalid_count_complete".into(), Value::Bool(false));
        p.insert(
            "note".into(),
            Value::String(format!(
                "data holds more than {} values, so only the first problem is reported; \
                 fix it and call again",
                wymcp_core::value_gate::MAX_REPORTED_VALUES
            )),
        );
    }
    data_level(p, target, digest);
}

fn data_level(p: &mut Map<String, Value>, target: &Target<'_>, digest: &Value) {
    target.insert_action(p);
    p.insert("input_schema".into(), digest.clone());
    p.insert("help".into(), Value::String(target.pointer()));
}
