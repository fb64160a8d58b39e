fn main() {
    let _ = wymcp::actions!({
        "add": {"description": "Add a note", "properties": {}, "related": ["lsit"]},
        "list": {"description": "List the notes", "properties": {}}
    });
}
