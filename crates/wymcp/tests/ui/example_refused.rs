fn main() {
    let _ = wymcp::actions!({
        "list": {
            "description": "List the notes",
            "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 100}},
            "examples": [{"limit": 10}, {"limit": 500}]
        }
    });
}
