#!/usr/bin/env bash
# Runs every fuzz target for a bounded time (seconds per target, default 300), one after
# another, growing the checked-in corpora. Needs nightly and cargo-fuzz:
#   rustup toolchain install nightly && cargo install cargo-fuzz
# Crashes land in fuzz/artifacts/<target>/; turn each into a regression test beside the
# decoder it broke.
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-300}
for t in cdr giop_framer ior corbaloc typecode_any value value_poly value_deep abstract_iface etcl; do
  mkdir -p "corpus/$t"
  echo "== $t for ${secs}s"
  cargo +nightly fuzz run "$t" "corpus/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536
done
