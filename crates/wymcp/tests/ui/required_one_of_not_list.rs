fn main() {
    let _actions = wymcp::actions!({
        "create": {"description": "x", "properties": {"x": {}, "y": {}}, "required_one_of": [["x"], "y"]}
    });
}
