#!/bin/sh
# Lints the files named on the command line.
cargo clippy --all-targets -- -D warnings
