fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "x", "properties": {"opts": {"type": "object", "properties": {"a": {}}}}, "defaults": {"opts": {"zzz": 1}}}
    });
}
