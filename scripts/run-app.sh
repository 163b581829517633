#!/usr/bin/env bash
# Builds the UI and the Cairn desktop app, then runs it.
#
#   scripts/run-app.sh             debug build (default)
#   scripts/run-app.sh --release   optimised build
#   scripts/run-app.sh --deb       build the Debian package with the Tauri CLI (no run; the
#                                  same files as scripts/package-deb.sh, which the tests use);
#                                  AppImage bundling needs tools from GitHub and is not done
#
# The default is a debug-profile build with the `custom-protocol` feature (the UI in ui/dist
# is embedded, no Vite server needed): it shares its compiled dependencies with the tests and
# the E2E test, so after those ran it is an incremental build of seconds, whereas a release
# build is a second cold build of the whole GTK/WebKit stack (~6-15 min on 2 cores).
# With no $DISPLAY the app runs inside a private Xvfb server (the display number is printed,
# e.g. for `DISPLAY=:N import -window root shot.png`). Stops with the app, or on Ctrl+C.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PROFILE_DIR=debug
CARGO_FLAGS=()
DEB=0
case "${1:-}" in
  "") ;;
  --release) PROFILE_DIR=release; CARGO_FLAGS=(--release) ;;
  --deb) DEB=1 ;;
  *) echo "usage: $0 [--release | --deb]" >&2; exit 2 ;;
esac

cd "$ROOT"
# Same target dir and debug-info settings as scripts/test.sh, so the two share artifacts.
if [ -f "$ROOT/scripts/cargo-env.sh" ]; then
  # shellcheck source=scripts/cargo-env.sh
  source "$ROOT/scripts/cargo-env.sh"
fi
if [ ! -d ui/node_modules ]; then
  (cd ui && npm ci --no-audit --no-fund)
fi
if [ "$DEB" = 1 ]; then
  # The cairn CLI first: the package carries it, with completions and man pages generated
  # from it (tauri.conf.json's bundle.linux.deb.files point at packaging/generated/).
  cargo build --release -p cairn-cli
  scripts/package-deb.sh --generate "${CARGO_TARGET_DIR:-$ROOT/target}/release"
  # The CLI builds the UI (beforeBuildCommand), then `cargo build --release` of the app package
  # with tauri/custom-protocol, then the .deb (name, icon and depends from tauri.conf.json).
  ui/node_modules/.bin/tauri build --bundles deb -- -p cairn-app
  ls -1 "${CARGO_TARGET_DIR:-$ROOT/target}"/release/bundle/deb/*.deb
  exit 0
fi
(cd ui && npm run build)
cargo build -p cairn-app --features custom-protocol "${CARGO_FLAGS[@]}"

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$TARGET_DIR/$PROFILE_DIR/cairn-app"
[ -x "$BIN" ] || { echo "run-app.sh: no binary at $BIN" >&2; exit 1; }

if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec "$BIN"
fi

# No display: start Xvfb on a free display number (it picks one and reports it on a fd).
DISPLAY_FILE="$(mktemp)"
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$DISPLAY_FILE" 2>/dev/null &
XVFB_PID=$!
APP_PID=""
cleanup() {
  if [ -n "$APP_PID" ]; then
    # Stop the app itself, so dbus-run-session then stops its bus and exits on its own.
    pkill -TERM -P "$APP_PID" 2>/dev/null || kill "$APP_PID" 2>/dev/null || true
    wait "$APP_PID" 2>/dev/null || true
  fi
  kill "$XVFB_PID" 2>/dev/null || true
  wait "$XVFB_PID" 2>/dev/null || true
  rm -f "$DISPLAY_FILE"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for _ in $(seq 1 100); do
  [ -s "$DISPLAY_FILE" ] && break
  kill -0 "$XVFB_PID" 2>/dev/null || { echo "run-app.sh: Xvfb failed to start" >&2; exit 1; }
  sleep 0.05
done
NUM="$(tr -dc '0-9' <"$DISPLAY_FILE")"
[ -n "$NUM" ] || { echo "run-app.sh: Xvfb reported no display" >&2; exit 1; }
echo "run-app.sh: no \$DISPLAY; running Cairn on Xvfb display :$NUM"
# dbus-run-session: GTK's D-Bus and accessibility helpers end with the app. Run it in the
# background and `wait`, so a signal to this script runs the cleanup at once.
DISPLAY=":$NUM" dbus-run-session -- "$BIN" &
APP_PID=$!
status=0
wait "$APP_PID" || status=$?
APP_PID=""
exit "$status"
