fn main() {
    let _actions = wymcp::actions!({
        "a\nb": {"description": "x", "properties": {}}
    });
}
