#!/usr/bin/env bash
# Runs Corbina's tests: formatting, lints, and every crate's unit, vector, property and
# interop tests. On a fresh Debian machine it first installs the Debian packages the tests
# use (as root, or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests use (the list, with why each is needed, is in
# scripts/debian-packages.txt): installed first when missing.
mapfile -t packages < <(grep -v '^\s*#' scripts/debian-packages.txt | grep -v '^\s*$')
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy

# The JacORB peer's jars (JacORB 3.9 and its IDL compiler, from Maven Central into ~/.m2), so
# that the tests build peers/jacorb offline.
mvn -q -B -f peers/jacorb/pom.xml dependency:resolve >/dev/null
# The same for the JacORB event clients (JacORB's services jar) of corbina-events' tests.
mvn -q -B -f peers/jacorb-events/pom.xml dependency:resolve >/dev/null

# The differential tests install omniORBpy (PyPI jeteve-omniorb) into a venv under target/
# themselves, with python3-venv from the list above.

# Interop tests must not quietly skip when the peer is missing.
export REQUIRE_OMNIORB_PEERS=1

# The phases below, each announced as "[k/n]" with the time the same phase took on this
# machine's last run (kept in target/test-phases.tsv) and so about how long is left.
phases=(fmt clippy test doc package)
times_file=target/test-phases.tsv
declare -A last=()
if [ -f "$times_file" ]; then
  while IFS=$'\t' read -r name secs; do last[$name]=$secs; done <"$times_file"
fi
declare -A took=()
run_start=$SECONDS
k=0
phase() {
  local name=$1
  shift
  k=$((k + 1))
  local hint="" left=0 p
  for p in "${phases[@]:k-1}"; do left=$((left + ${last[$p]:-0})); done
  if [ -n "${last[$name]:-}" ]; then
    hint=" (last run: $((last[$name] / 60))m$((last[$name] % 60))s; about $((left / 60))m left)"
  fi
  echo "==> [$k/${#phases[@]}] $name: $*$hint" >&2
  local start=$SECONDS
  "$@"
  took[$name]=$((SECONDS - start))
  mkdir -p target
  : >"$times_file.new"
  for p in "${phases[@]}"; do
    local t=${took[$p]:-${last[$p]:-}}
    [ -n "$t" ] && printf '%s\t%s\n' "$p" "$t" >>"$times_file.new"
  done
  mv "$times_file.new" "$times_file"
  echo "==> [$k/${#phases[@]}] $name done in $((took[$name] / 60))m$((took[$name] % 60))s" >&2
}

phase fmt cargo fmt --all --check
phase clippy cargo clippy --workspace --all-targets --locked -- -D warnings
phase test cargo test --workspace --locked
# Every crate's docs build without warnings (broken intra-doc links included).
RUSTDOCFLAGS="-D warnings" phase doc cargo doc --workspace --no-deps --locked
# The published crates package (metadata, versions on path dependencies, files). --no-verify:
# verifying builds each crate again from its .crate (minutes); cargo >= 1.90 resolves the
# unpublished workspace crates among them locally, so this needs no network.
phase package cargo package --no-verify --allow-dirty --locked --offline \
  -p corbina-cdr -p corbina-giop -p corbina-idl -p corbina-codegen -p corbina -p corbina-naming -p corbina-events -p corbina-cli -p corbina-tracecontext
total=$((SECONDS - run_start))
echo "==> all ${#phases[@]} phases passed in $((total / 60))m$((total % 60))s:" \
  "$(for p in "${phases[@]}"; do printf '%s %ss  ' "$p" "${took[$p]}"; done)" >&2
