fn main() {
    let _actions = wymcp::actions!({
        "create": {"properties": {}}
    });
}
