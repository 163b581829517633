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

step "UI: type check, lint (ESLint), unit tests (vitest) and build (the app embeds ui/dist)"
(cd ui && npm run build && npm run lint && npm test)

step "cargo clippy -D warnings"
cargo clippy "${FEATURES[@]}" -- -D warnings

step "cargo test (E2E under Xvfb; keyring round-trip against a real Secret Service in a private D-Bus session)"
# The desktop E2E suite (tests/e2e.rs) drives the real app through tauri-driver and must run
# (CAIRN_E2E=1: a missing driver is a failure, not a skip); CAIRN_E2E=0 skips it locally.
export CAIRN_E2E="${CAIRN_E2E:-1}" CAIRN_KEYRING_TEST=1 CAIRN_SANDBOX_TEST=1
# gnome-keyring keeps its files under XDG_DATA_HOME: a throwaway one, so a developer's own
# keyring is never touched.
KEYRING_HOME="$(mktemp -d)"
trap 'rm -rf "$KEYRING_HOME"' EXIT
export KEYRING_HOME
# No test may change the user's own Cairn config (rules, MCP servers, trust): a rules file an
# E2E run once left there changed what every later sandboxed command saw. Its seal key is
# Cairn's own and may be created.
USER_CONFIG="${XDG_CONFIG_HOME:-$HOME/.config}/cairn"
config_state() {
  find "$USER_CONFIG" -type f ! -name session-seal.key -exec sha256sum {} + 2>/dev/null | sort || true
}
CONFIG_BEFORE="$(config_state)"
xvfb-run -a -s "-screen 0 1280x800x24" \
  dbus-run-session -- sh -c '
    echo pw | XDG_DATA_HOME="$KEYRING_HOME" gnome-keyring-daemon --unlock --components=secrets >/dev/null
    exec cargo test "$@" --no-fail-fast' sh "${FEATURES[@]}"

step "the .deb: build it from the test run's binaries, install, check, purge (root only)"
# The binaries cargo test built (the app the E2E tests drove, debug, custom-protocol; its
# test-only fakes stay off without their variables) and the cairn CLI, with generated
# completions and man pages, desktop entry, icons, AppStream metadata, AppArmor profile.
scripts/test-deb.sh

step "the user's Cairn config is as the tests found it"
if [ "$(config_state)" != "$CONFIG_BEFORE" ]; then
  echo "the tests changed $USER_CONFIG:" >&2
  diff <(echo "$CONFIG_BEFORE") <(config_state) >&2 || true
  exit 1
fi

printf '\n==> all checks passed in %ss\n' "$((SECONDS - started))"
