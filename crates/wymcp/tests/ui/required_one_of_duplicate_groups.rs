fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "x", "properties": {"x": {}}, "required_one_of": [["x"], ["x"]]}
    });
}
