# Sourced by run.sh, instructions.sh and two-nodes.sh (with `here` set to this directory):
# builds the servers with the Cargo profile PROFILE (default release) and the allocator ALLOC
# (`system`, the default, or `mimalloc`: a target directory of its own, so both builds stay),
# unless BUILD=0; sets `bin` to the directory of the binaries. BIN_DIR=path runs the binaries
# copied there instead (say, a build kept aside for an A/B) and builds nothing.
PROFILE="${PROFILE:-release}"
ALLOC="${ALLOC:-system}"
export CARGO_TARGET_DIR="$here/target"
case "$ALLOC" in
  system) features=() ;;
  mimalloc) features=(--features mimalloc); CARGO_TARGET_DIR="$here/target/mimalloc" ;;
  *) echo "ALLOC must be system or mimalloc" >&2; exit 1 ;;
esac
if [ -n "${BIN_DIR:-}" ]; then BUILD=0; fi
if [ "${BUILD:-1}" = 1 ]; then (cd "$here" && cargo build --profile "$PROFILE" --quiet --bins "${features[@]}"); fi
bin="${BIN_DIR:-$CARGO_TARGET_DIR/$PROFILE}"
