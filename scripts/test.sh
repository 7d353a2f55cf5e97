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

cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
# Every crate's docs build without warnings (broken intra-doc links included).
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
# The published crates package (metadata, versions on path dependencies, files). --no-verify:
# verifying builds each crate again from its .crate (minutes); cargo >= 1.90 resolves the
# unpublished workspace crates among them locally, so this needs no network.
cargo package --no-verify --allow-dirty --locked --offline \
  -p corbina-cdr -p corbina-giop -p corbina-idl -p corbina-codegen -p corbina -p corbina-naming -p corbina-events -p corbina-cli -p corbina-tracecontext
