fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "x", "properties": []}
    });
}
