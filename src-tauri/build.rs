//! Build script: generates Tauri's context and the permission set of Cairn's own commands.

include!("command_names.rs");

fn main() {
    pack_relative_relocations();
    // Declaring the app's commands makes each one need an explicit grant in `capabilities/`.
    let attributes = tauri_build::Attributes::new()
        .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS));
    if let Err(error) = tauri_build::try_build(attributes) {
        // A build script reports failure by panicking; print the cause first.
        eprintln!("tauri-build failed: {error:#}");
        std::process::exit(1);
    }
}

/// Links the app with compact relative relocations (DT_RELR) where the C library can load them
/// (glibc 2.36+): the loader then reads about 20 KiB of relocation records at start instead of
/// about 1.5 MiB, which also stay mapped for the life of the process. `CAIRN_NO_RELR=1` at build
/// time turns it off (a binary meant for an older glibc).
fn pack_relative_relocations() {
    println!("cargo:rerun-if-env-changed=CAIRN_NO_RELR");
    let linux_gnu = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "gnu");
    if !linux_gnu || std::env::var_os("CAIRN_NO_RELR").is_some() {
        return;
    }
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return;
    };
    // "glibc 2.36"
    let text = String::from_utf8_lossy(&out.stdout);
    let mut version = text
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (version.next().unwrap_or(0), version.next().unwrap_or(0));
    if (major, minor) >= (2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}
