fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": 5, "properties": {}}
    });
}
