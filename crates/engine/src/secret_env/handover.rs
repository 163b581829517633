//! A process that already runs several threads before `main` (the desktop app: WebKit's
//! allocator starts one when its library loads) cannot safely edit its own environment, so
//! it starts itself again without the secret variables, handing their values over on its
//! standard input (a pipe nothing else holds), and the new process reads them from there.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

/// Set for the restarted process: the nonce its standard input starts with.
pub const HANDOVER_VAR: &str = "CAIRN_SEALED_STDIN";

/// Most bytes handed over (a pipe's buffer holds them without a reader).
const MAX_PAYLOAD: usize = 60 * 1024;

/// Restarts this program without `secrets` in its environment, their values written to its
/// standard input. Returns only when that failed, with why.
pub fn restart_without(secrets: &[(String, String)]) -> std::io::Error {
    match try_restart(secrets) {
        Ok(never) => match never {},
        Err(e) => e,
    }
}

fn try_restart(secrets: &[(String, String)]) -> std::io::Result<std::convert::Infallible> {
    let nonce = format!("{:032x}", rand::random::<u128>());
    let mut payload = Vec::new();
    payload.extend_from_slice(nonce.as_bytes());
    payload.push(0);
    for (k, v) in secrets {
        payload.extend_from_slice(k.as_bytes());
        payload.push(0);
        payload.extend_from_slice(v.as_bytes());
        payload.push(0);
    }
    if payload.len() > MAX_PAYLOAD {
        return Err(std::io::Error::other(
            "the secret variables are too large to hand over",
        ));
    }
    let (reader, mut writer) = std::io::pipe()?;
    writer.write_all(&payload)?;
    drop(writer);
    let exe = std::env::current_exe()?;
    let mut args = std::env::args_os();
    let mut cmd = Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    cmd.args(args).stdin(Stdio::from(reader));
    for (k, _) in secrets {
        cmd.env_remove(k);
    }
    cmd.env(HANDOVER_VAR, &nonce);
    Err(cmd.exec())
}

/// The secrets handed over by the process that restarted this one, read from standard input
/// (`None` when this process was not started that way).
pub fn take_handed_over() -> Option<Vec<(String, String)>> {
    let nonce = std::env::var(HANDOVER_VAR).ok()?;
    // Only a pipe: a terminal or a file on stdin was not handed over by Cairn.
    let stdin = std::fs::read_link("/proc/self/fd/0").ok()?;
    if !stdin.to_string_lossy().starts_with("pipe:") {
        return None;
    }
    let mut data = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD as u64 + 1)
        .read_to_end(&mut data)
        .ok()?;
    let mut parts = data.split(|b| *b == 0);
    if parts.next()? != nonce.as_bytes() {
        return None;
    }
    let mut out = Vec::new();
    while let Some(k) = parts.next().filter(|k| !k.is_empty()) {
        let v = parts.next()?;
        out.push((
            String::from_utf8(k.to_vec()).ok()?,
            String::from_utf8(v.to_vec()).ok()?,
        ));
    }
    Some(out)
}
