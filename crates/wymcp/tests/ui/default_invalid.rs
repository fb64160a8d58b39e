fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "x", "properties": {"color": {"type": "string"}}, "defaults": {"color": 5}}
    });
}
