#!/usr/bin/env bash
# Regenerates the app icon set: draws source.png (a cairn of stacked stones) with ImageMagick,
# then derives the sizes Tauri bundles with the Tauri CLI (`npm ci` in ui/ first).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
convert -size 1024x1024 xc:none \
  -fill '#1f2a37' -draw "roundrectangle 64,64 960,960 200,200" \
  -fill '#e9e4d8' -draw "ellipse 512,742 290,108 0,360" \
  -fill '#cfc6b3' -draw "ellipse 512,548 220,92 0,360" \
  -fill '#b3a78f' -draw "ellipse 512,384 150,76 0,360" \
  -fill '#e3a44b' -draw "ellipse 512,258 88,54 0,360" \
  PNG32:source.png
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
../ui/node_modules/.bin/tauri icon source.png -o "$out" >/dev/null 2>&1
cp "$out"/{32x32.png,64x64.png,128x128.png,128x128@2x.png,icon.png,icon.ico,icon.icns} .
# The other sizes of the freedesktop icon theme (the package installs every one).
for s in 16 24 48 256; do convert source.png -resize "${s}x${s}" "PNG32:${s}x${s}.png"; done
