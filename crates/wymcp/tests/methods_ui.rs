//! `#[wymcp::tool]` refuses each malformed action method at compile time, with the runtime
//! `build()`'s message where a schema rule is broken, pointing at the offending token (pinned
//! in `tests/ui_methods/*.stderr`).

#[test]
fn a_malformed_action_method_fails_the_build_at_the_offending_token() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui_methods/*.rs");
}
