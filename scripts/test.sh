#!/usr/bin/env bash
# Runs Cairn's whole test suite: format, lints, UI type check and build, every Rust test
# (engine, providers, tools, CLI end to end against the mock LLM server, desktop IPC, the
# generated-bindings check) and the desktop E2E test driving the real app under Xvfb.
# Expects scripts/setup.sh to have run (the README's test command runs both).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/cargo-env.sh
source "$ROOT/scripts/cargo-env.sh"
FEATURES=(--workspace --all-targets --features cairn-app/custom-protocol)

step() { printf '\n==> %s\n' "$*"; }
started=$SECONDS

step "cargo fmt --check"
cargo fmt --all -- --check

step "UI: type check and build (the app embeds ui/dist)"
(cd ui && npm run build)

step "cargo clippy -D warnings"
cargo clippy "${FEATURES[@]}" -- -D warnings

step "cargo test (with the E2E test under Xvfb + D-Bus)"
export CAIRN_E2E=1
xvfb-run -a -s "-screen 0 1280x800x24" \
  dbus-run-session -- cargo test "${FEATURES[@]}" --no-fail-fast

printf '\n==> all checks passed in %ss\n' "$((SECONDS - started))"
