#!/usr/bin/env bash
# Fuzzes every target (or the ones named) for SECONDS each with the stable-toolchain runner,
# after replaying its committed regressions, and prints the figures. Exits non-zero if any
# regression fails or any crash, abort or hang is found (inputs in fuzz/artifacts/TARGET/).
#
#   fuzz/run.sh 60                 every target, 60 s each
#   fuzz/run.sh 300 python rust    some targets
#   TG_FUZZ_SEED=7 fuzz/run.sh 60  a fixed seed (default: a new one each run, printed)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
seconds="${1:?usage: fuzz/run.sh SECONDS [TARGET...]}"
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(ndjson layers_config codec index python c rust typescript)
fi
target_dir="${CARGO_TARGET_DIR:-$here/target}"
cargo build --release --locked --quiet --manifest-path "$here/Cargo.toml" \
    --no-default-features --bin tg-fuzz --target-dir "$target_dir"
bin="$target_dir/release/tg-fuzz"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
for target in "${targets[@]}"; do
    if [ -d "$here/regressions/$target" ]; then
        if ! "$bin" "$target" --replay "$here/regressions/$target" 2>"$log"; then
            echo "fuzz: $target: a regression input fails (the last one named below):" >&2
            tail -n 40 "$log" >&2
            status=1
        fi
    fi
    if ! "$bin" "$target" --seconds "$seconds" ${TG_FUZZ_SEED:+--seed "$TG_FUZZ_SEED"}; then
        status=1
    fi
done
exit "$status"
