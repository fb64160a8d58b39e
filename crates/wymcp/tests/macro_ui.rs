//! The `actions!` macro refuses each malformed action schema at compile time, with the runtime
//! `build()`'s message, pointing at the offending token (pinned in `tests/ui/*.stderr`); the
//! `ActionEnum` derive refuses malformed enums the same way (`tests/ui_typed/*.stderr`).

#[test]
fn each_action_schema_rule_fails_the_build_at_the_offending_token() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}

#[test]
fn a_malformed_action_enum_fails_the_build_at_the_offending_token() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui_typed/*.rs");
}
