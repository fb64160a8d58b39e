//! Support for the macros; not public API.

pub use crate::prompt::function::support::{prompt_answer, prompt_arg, prompt_required};
pub use crate::resource::from_fn::support::{resource_answer, resource_var};
pub use crate::tool::methods::support::{
    answer, arg, data_map, method_action, params, params_action, plain_answer, plain_arg,
    plain_input_schema, plain_output_schema, property_schema,
};
pub use crate::tool::typed::support::{parse_data, typed_action, unit_action, unknown_action};
pub use schemars;
pub use serde;
pub use serde_json;

/// The property names of a type `#[wymcp::data]` could not read (or did not derive):
/// none, so the compile-time check defers to `build()`. A `#[wymcp::data]` struct's
/// inherent `__WYMCP_FIELDS` shadows this one.
pub trait NoFields {
    /// No names known.
    const __WYMCP_FIELDS: Option<&'static [&'static str]> = None;
}

impl<T: ?Sized> NoFields for T {}

/// Whether `fields` (when known) holds `name`.
pub const fn has_field(fields: Option<&[&str]>, name: &str) -> bool {
    let Some(fields) = fields else {
        return true;
    };
    let mut i = 0;
    while i < fields.len() {
        if str_eq(fields[i], name) {
            return true;
        }
        i += 1;
    }
    false
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// What a `#[wymcp::tool]` block with plain tool or prompt methods must be: `Clone`, each
/// of those methods running on a clone of the tool (rustc's refusal of a type that is not
/// `Clone` points at the method's marker and suggests `#[derive(Clone)]`).
pub trait CompanionSource: Clone {
    /// The clone a companion holds.
    fn companion(&self) -> Self {
        self.clone()
    }
}

impl<T: Clone> CompanionSource for T {}

/// The `Actions` of a literal the `actions!` macro validated at compile time.
pub fn actions_from_validated_json(text: &str) -> crate::Actions {
    crate::Actions::from_value(
        serde_json::from_str(text).expect("the actions! macro emits the JSON it validated"),
    )
}
