//! Placeholder until the gates benchmark lands.
fn main() {}
