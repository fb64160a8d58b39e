fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "x", "properties": {"a": {}, "b": {}}, "required_one_of": [["a"], ["a", "b"]]}
    });
}
