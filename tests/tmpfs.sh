#!/usr/bin/env bash
# The fault tests that mount a tmpfs (a full disk, a read-only store). They are #[ignore]d in a
# plain `cargo test` because a mount needs root; here they run where this machine allows one,
# and where it does not, the skip is said loudly instead of counted as a pass.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
probe=$(mktemp -d)
trap 'umount "$probe" 2>/dev/null || true; rmdir "$probe"' EXIT
if mount -t tmpfs -o size=64k tmpfs "$probe" 2>/dev/null; then
  umount "$probe"
  ${CARGO:-cargo} test -p tg-integration --test faults -- --ignored tmpfs_
else
  echo "SKIPPED (not passed): the tmpfs fault tests need a mount, which this machine refuses (run as root)" >&2
fi
