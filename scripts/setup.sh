#!/usr/bin/env bash
# Installs everything needed to build, run and test Cairn (desktop app included) on a fresh
# Debian 12 / Ubuntu machine. Idempotent: re-running it only does what is missing.
# Run as root, or as a user with sudo.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TAURI_DRIVER_VERSION="2.1.0"

log() { printf '\n==> %s\n' "$*"; }
die() { printf 'setup.sh: %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  die "run as root or install sudo"
fi

# System packages: toolchain helpers, WebKitGTK/GTK for Tauri, Xvfb + D-Bus for headless runs,
# WebKitWebDriver for the E2E test, keyring backends, bubblewrap, ssh-agent (the sandbox's
# desktop tests), tools for screenshots, and what the package test checks the .deb with
# (apparmor_parser in parse-only mode, bash-completion, appstreamcli, man, debootstrap).
APT_PACKAGES=(
  build-essential pkg-config libssl-dev libxdo-dev librsvg2-dev
  libwebkit2gtk-4.1-dev libayatana-appindicator3-dev
  xvfb xauth dbus dbus-x11 webkit2gtk-driver
  keyutils gnome-keyring libsecret-tools bubblewrap openssh-client
  xdotool imagemagick ripgrep python3-pytest
  git curl ca-certificates
  apparmor bash-completion appstream man-db python3 debootstrap
)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "apt-get install ${missing[*]}"
  "${SUDO[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
else
  log "system packages: all present"
fi

# AppArmor 4's parser (Debian 13's), in a folder of its own: Debian 12's parser (3.0.8) does
# not know the profile's `userns` rule, and the package test parses the whole profile with it.
# About a minute and 220 MB, once; the package test says so when it is missing.
AA4="${CAIRN_AA4_ROOT:-/var/cache/cairn-test/apparmor4}"
if [ ! -x "$AA4/usr/sbin/apparmor_parser" ] && ! apparmor_parser --version 2>/dev/null | grep -qE 'version [4-9]'; then
  log "debootstrap Debian 13 with apparmor into $AA4 (AppArmor 4's parser for the package test)"
  "${SUDO[@]}" rm -rf "$AA4.partial"
  "${SUDO[@]}" mkdir -p "$(dirname "$AA4")"
  if "${SUDO[@]}" debootstrap --variant=minbase --include=apparmor trixie "$AA4.partial" \
    http://deb.debian.org/debian >/tmp/cairn-debootstrap.log 2>&1; then
    "${SUDO[@]}" rm -rf "$AA4"
    "${SUDO[@]}" mv "$AA4.partial" "$AA4"
  else
    printf 'setup.sh: warning: debootstrap failed (see /tmp/cairn-debootstrap.log); the package test will skip parsing the userns rule\n' >&2
    "${SUDO[@]}" rm -rf "$AA4.partial"
  fi
fi

# Node.js + npm build the UI. Debian 12's nodejs is 18; Node >= 20.19 is what vite 8 needs.
if ! command -v npm >/dev/null 2>&1; then
  log "apt-get install nodejs npm"
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y --no-install-recommends nodejs npm
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js >= 20 is required (found $(node --version))"

# Rust: only crates.io is reachable from here, so a toolchain cannot be downloaded; check it.
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
command -v cargo >/dev/null 2>&1 || die "cargo is missing: install Rust >= 1.90 (rustup) first"
rust_minor="$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')"
[ "$rust_minor" -ge 90 ] || die "Rust >= 1.90 is required (found $(rustc --version))"
log "$(cargo --version), node $(node --version), npm $(npm --version)"

# UI dependencies, exactly as locked.
log "npm ci (ui/)"
(cd "$ROOT/ui" && npm ci --no-audit --no-fund)
# The reference MCP server the MCP tests run against (pinned by its lock file).
log "npm ci (crates/mcp/tests/npm)"
(cd "$ROOT/crates/mcp/tests/npm" && npm ci --no-audit --no-fund)
# The official MCP conformance suite, with cairn as the client (pinned by its lock file; on
# Node 20 it runs through tests/conformance/register.mjs, which supplies fs.globSync).
log "npm ci (crates/cli/tests/conformance)"
(cd "$ROOT/crates/cli/tests/conformance" && npm ci --no-audit --no-fund)
# Real ACP clients driving `cairn acp` (acpx and the official TypeScript SDK; pinned by the
# lock file; acpx asks for Node 22 but runs on 20).
log "npm ci (crates/cli/tests/acp)"
(cd "$ROOT/crates/cli/tests/acp" && npm ci --no-audit --no-fund)

# tauri-driver for the E2E test, pinned (a 3.0 alpha exists).
# (tauri-driver has no --version flag; cargo's install list knows what it installed.)
if ! cargo install --list | grep -qx "tauri-driver v$TAURI_DRIVER_VERSION:"; then
  log "cargo install tauri-driver $TAURI_DRIVER_VERSION"
  cargo install tauri-driver --locked --version "$TAURI_DRIVER_VERSION"
else
  log "tauri-driver $TAURI_DRIVER_VERSION: present"
fi
log "setup done"
