#!/usr/bin/env bash
# The package test (issue 46): builds the .deb from the binaries the test run built
# (scripts/package-deb.sh, debug profile), installs it with dpkg -i, checks it from the
# installed files, and purges it in a trap (on failure too). First it packages the same
# binaries with the Tauri bundler and compares both packages. Installing needs root (it
# installs to /usr); skipped with the reason otherwise. Never touches the user's Cairn config: the
# installed binaries run with a throwaway HOME and XDG folders.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
if [ -f "$ROOT/scripts/cargo-env.sh" ]; then
  # shellcheck source=scripts/cargo-env.sh
  source "$ROOT/scripts/cargo-env.sh"
fi
started=$SECONDS

fail() { echo "package test: FAILED: $*" >&2; exit 1; }
ok() { echo "  ok: $*"; }

# What is on the system outside the package's reach, before and after (dpkg's own database
# and the caches triggers refresh are not the package's).
snapshot() {
  find /usr /etc /opt /var/lib -xdev \
    \( -path /var/lib/dpkg -o -path /var/lib/apt -o -path /var/lib/ucf \
    -o -path /etc/ld.so.cache -o -path /var/lib/systemd \) -prune -o -print 2>/dev/null |
    sort
}

TMP="$(mktemp -d)"
INSTALLED=0
cleanup() {
  if [ "$INSTALLED" = 1 ]; then
    dpkg --purge cairn >/dev/null 2>&1 || echo "package test: dpkg --purge cairn failed" >&2
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

DEB="$(scripts/package-deb.sh debug)"
ok "built $(basename "$DEB") ($(du -h "$DEB" | cut -f1))"

# The Tauri bundler (what `scripts/run-app.sh --deb` runs for users) packages the same
# binaries from the same declaration: both packages must install the same files with the same
# maintainer scripts, and the bundler's Depends/Recommends must hold ours. `tauri bundle`
# packages what is built (no second build); it runs after ours because it patches the app
# binary in place with its bundle type.
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
rm -rf "$TARGET_DIR/debug/bundle/deb"
ui/node_modules/.bin/tauri bundle --debug --bundles deb >"$TMP/tauri-bundle.log" 2>&1 ||
  { cat "$TMP/tauri-bundle.log" >&2; fail "tauri bundle --debug --bundles deb"; }
TAURI_DEB="$(ls "$TARGET_DIR"/debug/bundle/deb/*.deb)"
files() { dpkg-deb -c "$1" | awk '{print $6}' | sed -e 's#^\./#/#' -e 's#^\([^/]\)#/\1#' -e 's#/$##' | grep -v '^$' | sort; }
files "$DEB" >"$TMP/ours.files"
files "$TAURI_DEB" >"$TMP/tauri.files"
diff -u "$TMP/ours.files" "$TMP/tauri.files" >&2 || fail "the Tauri bundler's .deb installs other files than ours"
mkdir -p "$TMP/ctl-ours" "$TMP/ctl-tauri"
dpkg-deb -e "$DEB" "$TMP/ctl-ours"
dpkg-deb -e "$TAURI_DEB" "$TMP/ctl-tauri"
for script in postinst postrm; do
  cmp -s "$TMP/ctl-ours/$script" "$TMP/ctl-tauri/$script" || fail "the two packages' $script differ"
done
python3 - "$DEB" "$TAURI_DEB" <<'EOF' || fail "the two packages' control fields"
import subprocess, sys
def fields(deb):
    out = subprocess.run(["dpkg-deb", "-f", deb, "Package", "Version", "Depends", "Recommends"],
                         capture_output=True, text=True, check=True).stdout
    f = dict(l.split(": ", 1) for l in out.splitlines() if ": " in l)
    return (f["Package"], f["Version"], {d.strip() for d in f["Depends"].split(",")},
            {d.strip() for d in f.get("Recommends", "").split(",") if d.strip()})
ours, tauri = fields(sys.argv[1]), fields(sys.argv[2])
assert ours[:2] == tauri[:2], (ours[:2], tauri[:2])
assert ours[2] <= tauri[2], ("Depends missing from the bundler's", ours[2] - tauri[2])
assert ours[3] == tauri[3], (ours[3], tauri[3])
EOF
ok "the Tauri bundler's .deb has the same $(wc -l <"$TMP/ours.files") paths, maintainer scripts and dependencies"
rm -rf "$TARGET_DIR/debug/bundle/deb"

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIPPED: installing the package (dpkg -i to /usr) needs root; both packages were built and compared"
  exit 0
fi
if dpkg-query -W -f='${Status}' cairn 2>/dev/null | grep -q "installed"; then
  echo "SKIPPED: a cairn package is already installed here; the package test does not touch it"
  exit 0
fi



snapshot >"$TMP/before"
INSTALLED=1
dpkg -i "$DEB" >"$TMP/dpkg-i.log" 2>&1 || { cat "$TMP/dpkg-i.log" >&2; fail "dpkg -i"; }
ok "dpkg -i"

# Every declared destination (the same list tauri.conf.json gives the Tauri bundler).
dpkg -L cairn >"$TMP/listed"
while read -r dest; do
  grep -qx "$dest" "$TMP/listed" || fail "$dest is not installed by the package"
done < <(python3 packaging/deb/stage.py list)
ok "dpkg -L lists every declared file"

# The installed binaries, with a throwaway home.
export HOME="$TMP/home" XDG_CONFIG_HOME="$TMP/home/.config" XDG_DATA_HOME="$TMP/home/.local/share" \
  XDG_CACHE_HOME="$TMP/home/.cache" CAIRN_KEYSTORE=memory CAIRN_LOG=error
mkdir -p "$HOME" "$TMP/ws"
want="cairn $(python3 packaging/deb/stage.py version)"
[ "$(/usr/bin/cairn --version)" = "$want" ] || fail "/usr/bin/cairn --version: $(/usr/bin/cairn --version)"
ok "/usr/bin/cairn --version: $want"

status=0
(cd "$TMP/ws" && /usr/bin/cairn doctor --json --offline) >"$TMP/doctor.jsonl" || status=$?
[ "$status" -le 1 ] || fail "cairn doctor exited $status"
python3 - "$TMP/doctor.jsonl" <<'EOF' || fail "cairn doctor --json rows"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert rows, "no rows"
for r in rows:
    assert {"group", "check", "status", "detail", "ms"} <= r.keys(), r
    assert r["status"] in ("ok", "warning", "problem", "skipped"), r
groups = {r["group"] for r in rows}
assert {"sandbox", "keyring", "provider", "state", "version"} <= groups, groups
EOF
ok "cairn doctor --json --offline: $(wc -l <"$TMP/doctor.jsonl") rows, exit $status"

# The app from /usr starts under Xvfb and shows its window.
xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- sh -c '
  /usr/bin/cairn-app >"$1/app.log" 2>&1 &
  app=$!
  for _ in $(seq 1 150); do
    if xdotool search --name "^Cairn" >/dev/null 2>&1; then
      kill "$app"; wait "$app" 2>/dev/null; exit 0
    fi
    kill -0 "$app" 2>/dev/null || exit 3
    sleep 0.2
  done
  kill "$app"; exit 4' sh "$TMP" 2>"$TMP/xvfb.log" ||
  { cat "$TMP/xvfb.log" "$TMP/app.log" >&2; fail "the installed app showed no window"; }
ok "/usr/bin/cairn-app shows its window under Xvfb"

bash --norc --noprofile -c '. /usr/share/bash-completion/bash_completion; __load_completion cairn; complete -p cairn' \
  >"$TMP/complete" 2>&1 || { cat "$TMP/complete" >&2; fail "complete -p cairn"; }
ok "bash-completion: $(cat "$TMP/complete")"
page="$(man -w cairn)" || fail "man -w cairn"
man -w cairn-doctor >/dev/null || fail "man -w cairn-doctor"
ok "man -w cairn: $page"
appstreamcli validate --no-net /usr/share/metainfo/dev.cairn.app.metainfo.xml >"$TMP/as" 2>&1 ||
  { cat "$TMP/as" >&2; fail "appstreamcli validate"; }
ok "appstreamcli validate --no-net"
dpkg -s cairn | grep -E '^Depends:.*\bbubblewrap\b' >/dev/null || fail "dpkg -s lists no bubblewrap dependency"
ok "dpkg -s: $(dpkg -s cairn | grep '^Depends:')"

# The AppArmor profile parses. Its userns rule needs AppArmor 4 (Ubuntu 24.04+). Where this
# system's parser is older (Debian 12's 3.0), the whole profile is parsed by AppArmor 4's
# parser from the Debian 13 folder scripts/setup.sh makes (with a broken userns rule as the
# control that this parser does read the rule), the rest by the system's parser, and the
# postinst must have left the profile out of /etc/apparmor.d. Loading it needs an AppArmor
# kernel: a manual check (docs/packaging.md).
PROFILE=/usr/share/cairn/apparmor/cairn
AA4="${CAIRN_AA4_ROOT:-/var/cache/cairn-test/apparmor4}"
if [ -e /etc/apparmor.d/abi/4.0 ]; then
  apparmor_parser -Q -K "$PROFILE" 2>"$TMP/aa" || { cat "$TMP/aa" >&2; fail "apparmor_parser -Q -K"; }
  [ -f /etc/apparmor.d/cairn ] || fail "the postinst did not install /etc/apparmor.d/cairn"
  ok "apparmor_parser -Q -K accepts the profile; /etc/apparmor.d/cairn installed"
else
  sed -e '/^abi /d' -e '/userns,/d' "$PROFILE" >"$TMP/profile"
  apparmor_parser -Q -K "$TMP/profile" 2>"$TMP/aa" || { cat "$TMP/aa" >&2; fail "apparmor_parser -Q -K"; }
  [ ! -e /etc/apparmor.d/cairn ] || fail "the postinst installed a profile this AppArmor cannot parse"
  ok "apparmor_parser $(apparmor_parser --version | head -1 | grep -oE '[0-9.]+$') -Q -K accepts the profile less its AppArmor 4 lines; not installed in /etc/apparmor.d here"
  if [ -x "$AA4/usr/sbin/apparmor_parser" ]; then
    aa4() { chroot "$AA4" /usr/sbin/apparmor_parser -Q -K "$1"; }
    work="$(mktemp -d "$AA4/tmp/cairn-profile.XXXXXX")"
    cp "$PROFILE" "$work/cairn"
    sed 's/^  userns,$/  userns bogus,/' "$PROFILE" >"$work/broken"
    grep -q 'userns bogus,' "$work/broken" || { rm -rf "$work"; fail "the control profile has no userns rule to break"; }
    inside="/tmp/$(basename "$work")"
    aa4 "$inside/cairn" 2>"$TMP/aa4" || { rm -rf "$work"; cat "$TMP/aa4" >&2; fail "AppArmor 4's parser rejects the profile"; }
    if aa4 "$inside/broken" 2>/dev/null; then rm -rf "$work"; fail "AppArmor 4's parser accepted a broken userns rule: it does not check the rule"; fi
    rm -rf "$work"
    ok "apparmor_parser $(chroot "$AA4" /usr/sbin/apparmor_parser --version | head -1 | grep -oE '[0-9.]+$') (Debian 13, $AA4) -Q -K accepts the whole profile, userns rules included, and rejects a broken userns rule"
  else
    echo "  SKIPPED: AppArmor 4's parser is not in $AA4 (scripts/setup.sh makes it; it needs the network): the userns rule was not parsed"
  fi
fi

dpkg --purge cairn >"$TMP/purge.log" 2>&1 || { cat "$TMP/purge.log" >&2; fail "dpkg --purge"; }
INSTALLED=0
snapshot >"$TMP/after"
if ! diff -u "$TMP/before" "$TMP/after" >"$TMP/left"; then
  cat "$TMP/left" >&2
  fail "dpkg --purge left files behind (or removed some)"
fi
ok "dpkg --purge leaves the system as it was"
echo "package test passed in $((SECONDS - started))s"
