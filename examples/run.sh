#!/usr/bin/env bash
# Runs one of Corbina's examples: builds it, starts its server (and, for `naming`, a
# corbina-names naming service), runs its client, then stops what it started.
#   usage: examples/run.sh hello|persistent|naming|callback|dii|any
set -euo pipefail
cd "$(dirname "$0")/.."
example=${1:?usage: examples/run.sh hello|persistent|naming|callback|dii|any}
cargo build -q -p corbina-examples -p corbina-naming
bin=${CARGO_TARGET_DIR:-target}/debug
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# start NAME ARGS...: a server writing its reference to $tmp/NAME.ref.
start() {
  local name=$1
  shift
  "$bin/$name" "$@" --ior-file "$tmp/$name.ref" >/dev/null &
  pids+=($!)
}

# wait_for FILE: until a server has written its reference.
wait_for() {
  for _ in $(seq 300); do [ -s "$1" ] && return; sleep 0.1; done
  echo "no reference in $1 after 30 s" >&2
  exit 1
}

case $example in
  hello)
    start hello-server
    wait_for "$tmp/hello-server.ref"
    "$bin/hello-client" "$(cat "$tmp/hello-server.ref")" world ;;
  persistent)
    # A fixed port, so the corbaloc URL stays the same across server restarts.
    start persistent-server -ORBEndpoint giop:tcp:127.0.0.1:2901
    wait_for "$tmp/persistent-server.ref"
    "$bin/persistent-client" corbaloc::127.0.0.1:2901/Counter 5 ;;
  naming)
    "$bin/corbina-names" --endpoint 127.0.0.1:0 --data-dir "$tmp/names" \
      --ior-file "$tmp/names.ior" >/dev/null 2>&1 &
    pids+=($!)
    wait_for "$tmp/names.ior"
    start naming-server -ORBInitRef "NameService=$(cat "$tmp/names.ior")" examples/greeter
    # The client is given only the corbaname URL the server printed.
    "$bin/naming-client" "$tmp/naming-server.ref" ;;
  callback)
    start callback-server
    "$bin/callback-client" "$tmp/callback-server.ref" news 3 ;;
  dii)
    start hello-server
    "$bin/dii-client" "$tmp/hello-server.ref" greet string:DII ;;
  any)
    start any-server
    "$bin/any-client" "$tmp/any-server.ref" ;;
  *)
    echo "unknown example $example (hello, persistent, naming, callback, dii, any)" >&2
    exit 2 ;;
esac
