//! [`ConfigurationError`]: why a tool or server was refused before anything was served.

use std::fmt;

/// A tool callback that a [`ConfigurationError`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Callback {
    /// The tool's `name`.
    Name,
    /// The tool's `description`.
    Description,
    /// The tool's `title`.
    Title,
    /// The tool's `annotations`.
    Annotations,
    /// The tool's `actions`.
    Actions,
    /// A plain tool's `input_schema`.
    InputSchema,
    /// The tool's `output_schema`.
    OutputSchema,
}

impl Callback {
    /// The callback's name as written in the tool traits, e.g. `"output_schema"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Callback::Name => "name",
            Callback::Description => "description",
            Callback::Title => "title",
            Callback::Annotations => "annotations",
            Callback::Actions => "actions",
            Callback::InputSchema => "input_schema",
            Callback::OutputSchema => "output_schema",
        }
    }
}

impl fmt::Display for Callback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is wrong with a configuration: one variant per rule, each carrying what it names.
///
/// The `Display` text of each variant is the message the runtime `build()` and the compile-time
/// macro both report, word for word.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// An action name contains a newline, which would make the joined summaries ambiguous.
    #[error(
        "an action name must not contain a newline (summaries are joined by newlines), got {0:?}"
    )]
    ActionNameNewline(String),
    /// An action name is empty.
    #[error("an action name must not be empty")]
    ActionNameEmpty,
    /// Two actions share a name.
    #[error("duplicate action name {0:?}")]
    DuplicateAction(String),
    /// An action schema is not a JSON object.
    #[error("an action schema must be an object, got {0}")]
    ActionNotObject(String),
    /// An action schema carries keys outside the vocabulary.
    #[error(
        "unknown action-schema key(s): {}. Known keys: description, properties, required, required_one_of, defaults, notes, related, examples, scopes",
        quoted(.0)
    )]
    UnknownKeys(Vec<String>),
    /// `description` is absent.
    #[error("missing description")]
    MissingDescription,
    /// `description` is not a string.
    #[error("description must be a string, got {0}")]
    DescriptionNotString(String),
    /// `description` contains a newline.
    #[error("description must not contain a newline (summaries are joined by newlines), got {0:?}")]
    DescriptionNewline(String),
    /// `properties` is absent.
    #[error("missing properties")]
    MissingProperties,
    /// A `properties` value is not an object (at `at`, a JSON Pointer into the schema).
    #[error("properties must be an object{}, got {got}", at_suffix(at))]
    PropertiesNotObject {
        /// Where, as a JSON Pointer into `properties` (`""` for the action's own).
        at: String,
        /// The offending value, rendered.
        got: String,
    },
    /// An `additionalProperties` value is not `true`, `false` or a schema.
    #[error(
        "additionalProperties must be true, false or a schema{}, got {got}",
        at_suffix(at)
    )]
    AdditionalPropertiesInvalid {
        /// Where, as a JSON Pointer into `properties`.
        at: String,
        /// The offending value, rendered.
        got: String,
    },
    /// `required` is not a list of strings.
    #[error("required must be a list of strings, got {0}")]
    RequiredNotList(String),
    /// `required` lists a name twice.
    #[error("required has duplicate entries: {}", quoted(.0))]
    RequiredDuplicates(Vec<String>),
    /// `required` names properties that are not declared.
    #[error("required references field(s) not declared in properties: {}", quoted(.0))]
    RequiredUndeclared(Vec<String>),
    /// `required_one_of` is not a list of lists of strings.
    #[error("required_one_of must be a list of lists of strings, got {0}")]
    RequiredOneOfNotList(String),
    /// A `required_one_of` group is empty.
    #[error("required_one_of contains an empty group")]
    RequiredOneOfEmptyGroup,
    /// A `required_one_of` group lists a name twice.
    #[error("required_one_of group has duplicate entries: {}", quoted(.0))]
    RequiredOneOfGroupDuplicates(Vec<String>),
    /// A `required_one_of` group names undeclared properties.
    #[error("required_one_of group references field(s) not declared in properties: {}", quoted(.0))]
    RequiredOneOfUndeclared(Vec<String>),
    /// Two `required_one_of` groups are the same.
    #[error("required_one_of has duplicate groups: {}", quoted(.0))]
    RequiredOneOfDuplicateGroups(Vec<String>),
    /// A group is a strict superset of another, so it can never be the one that satisfies.
    #[error(
        "required_one_of group {} is a strict superset of {} (dead config: the smaller group always satisfies first)",
        quoted(superset),
        quoted(subset)
    )]
    RequiredOneOfSuperset {
        /// The larger group.
        superset: Vec<String>,
        /// The group it contains.
        subset: Vec<String>,
    },
    /// `defaults` is not an object.
    #[error("defaults must be an object keyed by property name, got {0}")]
    DefaultsNotObject(String),
    /// `defaults` names properties that are not declared.
    #[error("defaults references field(s) not declared in properties: {}", quoted(.0))]
    DefaultsUndeclared(Vec<String>),
    /// A default is also required, so it can never apply.
    #[error("defaults for required field(s) {} can never apply (dead config)", quoted(.0))]
    DefaultsRequired(Vec<String>),
    /// A default value fails its property's schema.
    #[error("default for {property:?} does not satisfy its schema: {}", .problems.join("; "))]
    DefaultInvalid {
        /// The property whose default is refused.
        property: String,
        /// What the value gate says about it.
        problems: Vec<String>,
    },
    /// A default value carries keys the unknown-key gate would refuse from a caller.
    #[error(
        "default for {property:?} carries key(s) the unknown-key gate would refuse: {}",
        quoted(paths)
    )]
    DefaultUnknownKeys {
        /// The property whose default is refused.
        property: String,
        /// The refused keys, as data paths.
        paths: Vec<String>,
    },
    /// `notes` is not a string.
    #[error("notes must be a string, got {0}")]
    NotesNotString(String),
    /// `related` is not a list of strings.
    #[error("related must be a list of strings, got {0}")]
    RelatedNotList(String),
    /// `scopes` is not a list of scope tokens (RFC 6749 §3.3: printable ASCII without spaces,
    /// `"` or `\\`).
    #[error(
        "scopes must be a list of OAuth scope tokens (no spaces, quotes or backslashes), got {0}"
    )]
    ScopesInvalid(String),
    /// `examples` is not a list of objects.
    #[error("examples must be a list of objects, got {0}")]
    ExamplesNotList(String),
    /// An example is a `data` the gates would refuse from a caller.
    #[error("examples[{index}] would be refused by the gates: {reason}")]
    ExampleRefused {
        /// The example's position in `examples`.
        index: usize,
        /// What the gates would say, bounded (no value is quoted).
        reason: String,
    },
    /// `related` names no action of the tool.
    #[error("related names {} that the tool does not declare; its actions: {}", quoted(.unknown), quoted(.actions))]
    RelatedUnknown {
        /// The related names that are not actions.
        unknown: Vec<String>,
        /// The tool's action names, sorted.
        actions: Vec<String>,
    },
    /// The property schemas do not build as a JSON Schema (2020-12, format asserted).
    #[error("properties do not build as a JSON Schema: {0}")]
    SchemaBuild(String),
    /// The output schema does not build as a JSON Schema.
    #[error("output schema does not build as a JSON Schema: {0}")]
    OutputSchemaBuild(String),
    /// The output schema does not describe an object.
    #[error("output schema must declare \"type\": \"object\", got {0}")]
    OutputSchemaNotObject(String),
    /// A tool annotation MCP defines carries a value of the wrong type (`title` is a string,
    /// the `*Hint` annotations are booleans).
    #[error("annotation {key:?} must be {expected}, got {got}")]
    AnnotationType {
        /// The annotation's key.
        key: String,
        /// What MCP's `ToolAnnotations` requires, e.g. `"a boolean"`.
        expected: &'static str,
        /// The value declared, bounded.
        got: String,
    },
    /// A plain tool's input schema does not build as a JSON Schema.
    #[error("input schema does not build as a JSON Schema: {0}")]
    InputSchemaBuild(String),
    /// A plain tool's input schema is not an object schema.
    #[error("input schema must declare \"type\": \"object\", got {0}")]
    InputSchemaNotObject(String),
    /// A property's `x-mcp-header` annotation (SEP-2243) is one clients must reject, dropping
    /// the tool: not a non-empty HTTP field-name token, or on a property that is not a string,
    /// integer or boolean.
    #[error("property {property:?}: x-mcp-header {header:?} {reason}")]
    InvalidHeaderParam {
        /// The annotated property.
        property: String,
        /// The annotation's value, bounded (boxed, as below: keeps every `Problem` small).
        header: Box<str>,
        /// What is wrong, e.g. `"must be a non-empty string"`.
        reason: &'static str,
    },
    /// Two properties declare the same `x-mcp-header` (header names are case-insensitive).
    #[error(
        "properties {first:?} and {property:?} both declare x-mcp-header {header:?} (header names are case-insensitive)"
    )]
    DuplicateHeaderParam {
        /// The property declaring it again.
        property: String,
        /// The header name, as that property declares it.
        header: Box<str>,
        /// The property declaring it first (boxed: keeps every `Problem` small).
        first: Box<str>,
    },
    /// A tool name is empty or contains a character outside `[A-Za-z0-9_.-]`.
    #[error(
        "tool name must be 1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.', got {0:?}"
    )]
    InvalidToolName(String),
    /// A consumer tool uses the name reserved for the framework's help tool.
    #[error(
        "Tool {0:?} uses the reserved name \"help\". The help tool is provided by wymcp and injected into every server automatically."
    )]
    ReservedName(String),
    /// A tool registered on a live session uses the name reserved for the help tool.
    #[error(
        "Tool {0:?} uses the reserved name \"help\". The help tool is provided by wymcp and cannot be replaced at runtime."
    )]
    ReservedAtRuntime(String),
    /// Two tools share a name.
    #[error(
        "Duplicate tool name {0:?} found in the server's tools list. Each tool must have a unique name."
    )]
    DuplicateTool(String),
    /// A hint is missing a field or carries one it does not know.
    #[error("{0}")]
    Hint(String),
    /// A resource template is not a valid RFC 6570 URI template.
    #[error("resource template {template:?} is not a valid RFC 6570 URI template: {reason}")]
    InvalidUriTemplate {
        /// The template as declared.
        template: String,
        /// What the parser refused.
        reason: String,
    },
    /// A resource URI is not a valid URI (RFC 3986).
    #[error("resource URI {uri:?} is not a valid URI: {reason}")]
    InvalidResourceUri {
        /// The URI as declared.
        uri: String,
        /// What the parser refused.
        reason: String,
    },
    /// The scopes a resource, resource template or prompt declares are not scope tokens.
    #[error("{of}: {reason}")]
    FeatureScopesInvalid {
        /// What declares them (`resource "notes://a"`, `prompt "plan"`).
        of: String,
        /// What the check refused ([`Problem::ScopesInvalid`]'s text).
        reason: String,
    },
    /// A resource, resource template, prompt or prompt argument has an empty name.
    #[error("{0} must have a non-empty name")]
    EmptyName(String),
    /// Two resources share a URI.
    #[error("duplicate resource URI {0:?}: each resource must have a unique URI")]
    DuplicateResource(String),
    /// Two resource templates share a URI template.
    #[error("duplicate resource template {0:?}: each template must be declared once")]
    DuplicateResourceTemplate(String),
    /// Two prompts share a name.
    #[error("duplicate prompt name {0:?}: each prompt must have a unique name")]
    DuplicatePrompt(String),
    /// A prompt declares an argument twice.
    #[error("prompt {prompt:?} declares argument {argument:?} twice")]
    DuplicatePromptArgument {
        /// The prompt.
        prompt: String,
        /// The repeated argument.
        argument: String,
    },
    /// A completion provider names a prompt the server does not have.
    #[error("completion provider names unknown prompt {0:?}")]
    CompletionUnknownPrompt(String),
    /// A completion provider names an argument the prompt does not declare.
    #[error(
        "completion provider names argument {argument:?}, which prompt {prompt:?} does not declare"
    )]
    CompletionUnknownArgument {
        /// The prompt.
        prompt: String,
        /// The undeclared argument.
        argument: String,
    },
    /// A completion provider names a resource template the server does not have.
    #[error("completion provider names unknown resource template {0:?}")]
    CompletionUnknownTemplate(String),
    /// A completion provider names a variable the resource template does not have.
    #[error(
        "completion provider names variable {variable:?}, which resource template {template:?} does not have"
    )]
    CompletionUnknownVariable {
        /// The URI template.
        template: String,
        /// The unknown variable.
        variable: String,
    },
    /// Two completion providers serve the same prompt argument or template variable.
    #[error("duplicate completion provider for {0}")]
    DuplicateCompletion(String),
    /// A skill (the skills extension) cannot be served: its frontmatter, name, paths or
    /// size break the extension's rules.
    #[error("skill {skill:?}: {reason}")]
    InvalidSkill {
        /// The skill, as `<prefix>/<name>` (or `(unnamed)`).
        skill: String,
        /// The rule it breaks.
        reason: String,
    },
    /// Task support is declared for a tool the server does not have.
    #[error("task support is declared for unknown tool {0:?}")]
    InvalidTaskTool(String),
    /// A layer is attached to a tool the server does not have.
    #[error("a layer is attached to unknown tool {0:?}")]
    LayerUnknownTool(String),
    /// A layer is attached to an action its tool does not have (or to a plain tool's action).
    #[error("a layer is attached to action {action:?}, which tool {tool:?} does not have")]
    LayerUnknownAction {
        /// The tool.
        tool: String,
        /// The unknown action.
        action: String,
    },
    /// A mount prefix that would not make tool names: it has a character other than ASCII
    /// letters, digits, `_`, `-` and `.`.
    #[error(
        "mount prefix {0:?} is not a tool-name prefix: use ASCII letters, digits, '_', '-' and '.' only"
    )]
    InvalidMountPrefix(String),
    /// Two parts of a server, one of them mounted, serve the same tool name, prompt name,
    /// resource URI or resource template.
    #[error("{item} is served twice: {}", by_each(.servers))]
    MountCollision {
        /// What both serve, its kind and its name (or URI): `tool "notes_search"`,
        /// `prompt "notes_plan"`, `resource "notes://index"`, `resource template "…"`.
        item: String,
        /// Who serve it, the first first: `this server`, or a mounted server and its own
        /// name for it.
        servers: Vec<String>,
    },
}

fn quoted(items: &[String]) -> String {
    let inner: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", inner.join(", "))
}

/// `by A, and by B`.
fn by_each(servers: &[String]) -> String {
    let each: Vec<String> = servers.iter().map(|s| format!("by {s}")).collect();
    each.join(", and ")
}

fn at_suffix(at: &str) -> String {
    if at.is_empty() {
        String::new()
    } else {
        format!(" at {at}")
    }
}

/// A tool or server refused at build time, naming the tool, the callback or action, and what is
/// wrong, before any request is served.
///
/// ```
/// use wymcp_core::{ConfigurationError, Problem};
///
/// let err = ConfigurationError::new(Problem::MissingDescription)
///     .in_tool("tasks")
///     .in_action("create");
/// assert_eq!(err.to_string(), r#"tool "tasks", action "create": missing description"#);
/// assert_eq!(err.action(), Some("create"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigurationError {
    tool: Option<String>,
    callback: Option<Callback>,
    action: Option<String>,
    problem: Problem,
}

impl ConfigurationError {
    /// A refusal naming only its problem; locate it with the `in_*` methods.
    pub fn new(problem: Problem) -> Self {
        ConfigurationError {
            tool: None,
            callback: None,
            action: None,
            problem,
        }
    }

    /// Names the tool refused.
    pub fn in_tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = Some(tool.into());
        self
    }

    /// Names the callback whose return is refused.
    pub fn in_callback(mut self, callback: Callback) -> Self {
        self.callback = Some(callback);
        self
    }

    /// Names the action whose schema is refused (implies the `actions` callback).
    pub fn in_action(mut self, action: impl Into<String>) -> Self {
        self.callback = Some(Callback::Actions);
        self.action = Some(action.into());
        self
    }

    /// The tool refused, when the refusal concerns one.
    pub fn tool(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    /// The callback refused, when the refusal names one.
    pub fn callback(&self) -> Option<Callback> {
        self.callback
    }

    /// The action refused, when the refusal names one.
    pub fn action(&self) -> Option<&str> {
        self.action.as_deref()
    }

    /// What is wrong.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }
}

impl fmt::Display for ConfigurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(tool) = &self.tool {
            parts.push(format!("tool {tool:?}"));
        }
        match (&self.action, self.callback) {
            (Some(action), _) => parts.push(format!("action {action:?}")),
            (None, Some(callback)) => parts.push(format!("callback {callback}")),
            (None, None) => {}
        }
        if parts.is_empty() {
            write!(f, "{}", self.problem)
        } else {
            write!(f, "{}: {}", parts.join(", "), self.problem)
        }
    }
}

impl std::error::Error for ConfigurationError {}
