fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "x", "properties": {"when": {"type": "string", "format": "no-such-format"}}}
    });
}
