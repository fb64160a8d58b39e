fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "First line\nsecond", "properties": {}}
    });
}
