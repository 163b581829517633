# Shared cargo settings for scripts/test.sh and scripts/run-app.sh (sourced, not run).
# One target dir outside the clone, so a fresh clone (CI) reuses what an earlier build made,
# and no debug info: it triples the size of the GTK/WebKit build and is not needed to test.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/cairn/target}"
export CARGO_PROFILE_DEV_DEBUG="${CARGO_PROFILE_DEV_DEBUG:-0}"
export CARGO_PROFILE_TEST_DEBUG="${CARGO_PROFILE_TEST_DEBUG:-0}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# No incremental caches: a cold run (CI) never reuses them, and they doubled the target dir.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
