#!/usr/bin/env bash
# server-ir.sh -- user-space instructions per null twoway call of the Corbina server.
#
# Runs `target/release/corbina-ttcp server` under `valgrind --tool=callgrind`, drives it
# with the omniORB client `omni_ping` (peers/omni_ping.cc) making N1, then (on a fresh
# server) N2 null twoway calls, and prints (Ir(N2) - Ir(N1)) / (N2 - N1): start-up,
# connection set-up and shutdown cancel out. Exact counts (callgrind does not see the
# kernel), so a busy machine does not matter. The client counterpart is
# `corbina-ttcp suite --quick --only callgrind --peer omniorb`.
#
# usage: scripts/server-ir.sh [N1 [N2]]        (defaults 2000 4000)
# env:   KEEP=1 keeps the callgrind files (for callgrind_annotate); OUT=DIR puts them there;
#        SERVER=PATH measures that corbina-ttcp binary instead of building target/release's
#        (a before/after pair: copy the "before" binary aside first).
# needs: valgrind, omniORB (libomniorb4-dev, omniidl); builds the release binary and the
#        peers (make -C peers B=target/peers omni_ping) if needed.
set -euo pipefail

N1=${1:-2000}
N2=${2:-4000}
if [ "$N2" -le "$N1" ]; then
    echo "server-ir.sh: N2 ($N2) must be larger than N1 ($N1)" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v valgrind >/dev/null || { echo "server-ir.sh: valgrind is not installed" >&2; exit 1; }

if [ -z "${SERVER:-}" ]; then
    cargo build --release -q -p corbina-ttcp
    SERVER=$ROOT/target/release/corbina-ttcp
fi
make -s -C peers B="$ROOT/target/peers" "$ROOT/target/peers/omni_ping"
PING=$ROOT/target/peers/omni_ping

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/server-ir.XXXXXX")}
mkdir -p "$OUT"
VG=
cleanup() {
    # Only the server this script started, by its PID.
    if [ -n "$VG" ] && kill -0 "$VG" 2>/dev/null; then kill -KILL "$VG" 2>/dev/null || true; fi
    if [ -z "${KEEP:-}" ]; then rm -rf "$OUT"; fi
}
trap cleanup EXIT

# Instructions of one server process serving $1 calls.
server_ir() {
    local n=$1 ior=$OUT/server-$1.ior cg=$OUT/callgrind.server.$1.out
    rm -f "$ior" "$cg"
    valgrind --tool=callgrind --callgrind-out-file="$cg" \
        "$SERVER" server --endpoint 127.0.0.1:0 --objects 1 --ior-file "$ior" \
        --lifetime 600 >"$OUT/server-$n.log" 2>&1 &
    VG=$!
    for _ in $(seq 600); do
        [ -s "$ior" ] && break
        kill -0 "$VG" 2>/dev/null || { cat "$OUT/server-$n.log" >&2; exit 1; }
        sleep 0.1
    done
    [ -s "$ior" ] || { echo "server-ir.sh: no IOR from the server" >&2; exit 1; }
    "$PING" "$ior" "$n" >/dev/null
    # SIGTERM ends the server; callgrind writes its totals on the way out.
    kill -TERM "$VG"
    wait "$VG" || true
    VG=
    local total
    total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$cg")
    [ -n "$total" ] || { echo "server-ir.sh: no totals in $cg" >&2; exit 1; }
    echo "$total"
}

I1=$(server_ir "$N1")
I2=$(server_ir "$N2")
echo "server Ir: $I1 at $N1 calls, $I2 at $N2 calls"
awk -v a="$I1" -v b="$I2" -v n1="$N1" -v n2="$N2" \
    'BEGIN { printf "server Ir per null twoway: %.0f\n", (b - a) / (n2 - n1) }'
if [ -n "${KEEP:-}" ]; then echo "callgrind files: $OUT"; fi
