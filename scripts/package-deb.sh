#!/usr/bin/env bash
# Builds the cairn .deb with dpkg-deb from binaries already built (no second Tauri build):
# the app and the cairn CLI, shell completions and man pages generated from the CLI
# definition, the desktop entry, icons at every size, AppStream metadata and the AppArmor
# profile. What goes where is read from tauri.conf.json, the same declaration the Tauri
# bundler (`scripts/run-app.sh --deb`) uses, so both packages install the same files.
#
#   scripts/package-deb.sh [debug|release]   build target/<profile>/… into a .deb (default debug)
#   scripts/package-deb.sh --generate DIR    only write the generated files (cairn, completions,
#                                            man pages) from the binaries in DIR
#
# Prints the path of the .deb. Binaries: $CARGO_TARGET_DIR/<profile>/{cairn,cairn-app}.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ -f "$ROOT/scripts/cargo-env.sh" ]; then
  # shellcheck source=scripts/cargo-env.sh
  source "$ROOT/scripts/cargo-env.sh"
fi
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
GEN="$ROOT/packaging/generated"

# The files generated from the CLI: the binary itself, completions, gzipped man pages.
generate() {
  local bin_dir="$1"
  [ -x "$bin_dir/cairn" ] || { echo "package-deb.sh: no cairn binary in $bin_dir" >&2; exit 1; }
  rm -rf "$GEN"
  mkdir -p "$GEN/completions" "$GEN/man1"
  cp "$bin_dir/cairn" "$GEN/cairn"
  "$bin_dir/cairn" completions bash >"$GEN/completions/cairn.bash"
  "$bin_dir/cairn" completions zsh >"$GEN/completions/_cairn"
  "$bin_dir/cairn" completions fish >"$GEN/completions/cairn.fish"
  "$bin_dir/cairn" man "$GEN/man1"
  gzip -9n "$GEN"/man1/*.1
}

case "${1:-debug}" in
  --generate) generate "${2:?usage: $0 --generate DIR}"; exit 0 ;;
  debug | release) PROFILE="${1:-debug}" ;;
  *) echo "usage: $0 [debug|release] | --generate DIR" >&2; exit 2 ;;
esac

BIN_DIR="$TARGET_DIR/$PROFILE"
[ -x "$BIN_DIR/cairn-app" ] || {
  echo "package-deb.sh: no cairn-app in $BIN_DIR (build it first: cargo build -p cairn-app --features custom-protocol)" >&2
  exit 1
}
generate "$BIN_DIR"

VERSION="$(python3 packaging/deb/stage.py version)"
ARCH="$(dpkg --print-architecture)"
OUT="$TARGET_DIR/deb"
STAGE="$OUT/cairn_${VERSION}_${ARCH}"
mkdir -p "$OUT"
python3 packaging/deb/stage.py stage "$STAGE" "$BIN_DIR"
# -Zgzip -z1: the debug binaries are large and this package is for tests; seconds matter.
dpkg-deb --root-owner-group -Zgzip -z1 --build "$STAGE" "$OUT/cairn_${VERSION}_${ARCH}.deb" >/dev/null
rm -rf "$STAGE"
echo "$OUT/cairn_${VERSION}_${ARCH}.deb"
