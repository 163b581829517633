#!/usr/bin/env python3
"""Stages the cairn .deb tree from tauri.conf.json, the one declaration both packages use.

The Tauri bundler (`scripts/run-app.sh --deb`) installs the app binary, the desktop entry
(from `desktopTemplate`), one icon per PNG size of `bundle.icon` and every entry of
`bundle.linux.deb.files`; this stager puts the same files at the same paths from binaries a
test run already built, so `dpkg-deb` can make the package without a second (release) build.

  stage.py list                          the destinations both packages install, one a line
  stage.py stage ROOT BIN_DIR            stage the tree and DEBIAN/ under ROOT
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONF = json.loads((REPO / "tauri.conf.json").read_text())
BUNDLE = CONF["bundle"]
DEB = BUNDLE["linux"]["deb"]
MAIN_BINARY = "cairn-app"
# Tauri's AppCategory::DeveloperTool as freedesktop categories.
CATEGORIES = {"DeveloperTool": "Development;"}


def version() -> str:
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text())
    return cargo["workspace"]["package"]["version"]


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"stage.py: {path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def icons() -> dict[str, Path]:
    """Tauri's naming: usr/share/icons/hicolor/WxH[@2]/apps/<main binary>.png, first wins."""
    out: dict[str, Path] = {}
    for rel in BUNDLE["icon"]:
        src = REPO / rel
        if src.suffix != ".png":
            continue
        w, h = png_size(src)
        hd = "@2" if "@2x" in src.name else ""
        dest = f"/usr/share/icons/hicolor/{w}x{h}{hd}/apps/{MAIN_BINARY}.png"
        out.setdefault(dest, src)
    return out


def declared() -> list[str]:
    """Every destination, the way the Tauri bundler lays them out."""
    dests = [f"/usr/bin/{MAIN_BINARY}", f"/usr/share/applications/{CONF['productName']}.desktop"]
    dests += sorted(icons())
    dests += sorted(DEB.get("files", {}))
    return dests


def desktop_entry() -> str:
    text = (REPO / DEB["desktopTemplate"]).read_text()
    values = {
        "categories": CATEGORIES.get(BUNDLE.get("category", ""), ""),
        "comment": BUNDLE.get("shortDescription", ""),
        "exec": MAIN_BINARY,
        "icon": MAIN_BINARY,
        "name": CONF["productName"],
    }
    for k, v in values.items():
        text = text.replace("{{" + k + "}}", v)
    return text


def copy(src: Path, dest: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True)
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def installed_size(root: Path) -> int:
    total = 0
    for p in root.rglob("*"):
        if p.is_file() and "DEBIAN" not in p.relative_to(root).parts:
            total += p.stat().st_size
    return total // 1024


def stage(root: Path, bin_dir: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    copy(bin_dir / MAIN_BINARY, root / f"usr/bin/{MAIN_BINARY}")
    desktop = root / f"usr/share/applications/{CONF['productName']}.desktop"
    desktop.parent.mkdir(parents=True, exist_ok=True)
    desktop.write_text(desktop_entry())
    for dest, src in icons().items():
        copy(src, root / dest.lstrip("/"))
    for dest, src in DEB.get("files", {}).items():
        source = REPO / src
        if not source.exists():
            raise SystemExit(f"stage.py: {src} is missing (run scripts/package-deb.sh, which generates it)")
        copy(source, root / dest.lstrip("/"))
    for p in root.rglob("*"):
        p.chmod(0o755 if p.is_dir() or os.access(p, os.X_OK) else 0o644)
    control = root / "DEBIAN"
    control.mkdir()
    arch = subprocess.run(
        ["dpkg", "--print-architecture"], check=True, capture_output=True, text=True
    ).stdout.strip()
    long = " ".join(BUNDLE.get("longDescription", "").split())
    fields = [
        ("Package", CONF["productName"].lower()),
        ("Version", version()),
        ("Architecture", arch),
        ("Installed-Size", str(installed_size(root))),
        ("Maintainer", CONF["identifier"].split(".")[1]),
        ("Section", DEB.get("section", "")),
        ("Priority", DEB.get("priority", "optional")),
        ("Depends", ", ".join(DEB.get("depends", []))),
        ("Recommends", ", ".join(DEB.get("recommends", []))),
        ("Description", BUNDLE.get("shortDescription", "") + "\n " + long),
    ]
    (control / "control").write_text(
        "".join(f"{k}: {v}\n" for k, v in fields if v)
    )
    for key, name in [("postInstallScript", "postinst"), ("postRemoveScript", "postrm")]:
        if key in DEB:
            shutil.copy(REPO / DEB[key], control / name)
            (control / name).chmod(0o755)


def main() -> None:
    if len(sys.argv) == 2 and sys.argv[1] == "list":
        print("\n".join(declared()))
    elif len(sys.argv) == 2 and sys.argv[1] == "version":
        print(version())
    elif len(sys.argv) == 4 and sys.argv[1] == "stage":
        stage(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
