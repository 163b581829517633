//! The bridge inside the sandbox (`cairn __net-bridge --port P --socket S -- command…`):
//! listens on `127.0.0.1:P` in the command's own network namespace, forwards every
//! connection to the proxy's unix socket `S` (bound in), runs the command, and exits with
//! its status. It is a hidden mode of Cairn's own binaries (the CLI and the app call
//! [`main_if_bridge`] first thing), so it ships wherever Cairn does; Cairn binds its own
//! executable into the sandbox to run it, so it is found in development builds too.

use std::path::PathBuf;
use std::sync::OnceLock;

use tokio::net::{TcpListener, UnixStream};

/// The program that runs the bridge, once a binary said it can ([`main_if_bridge`]).
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Runs the bridge and exits when this process was started as one (`argv[1]` is
/// [`crate::BRIDGE_ARG`]); otherwise records this executable as the bridge program for the
/// sandboxes this process starts, and returns.
pub fn main_if_bridge() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(crate::BRIDGE_ARG) {
        std::process::exit(run(&args[2..]));
    }
    if let Ok(exe) = std::env::current_exe() {
        let _ = PROGRAM.set(exe);
    }
}

/// Sets the bridge program (a process whose own executable has no bridge mode: a test
/// binary naming Cairn's); false when one was set already.
pub fn set_program(path: PathBuf) -> bool {
    PROGRAM.set(path).is_ok()
}

/// The executable that runs the bridge, when this process has one.
pub fn program() -> Option<&'static PathBuf> {
    PROGRAM.get()
}

/// Runs the bridge with its arguments (after [`crate::BRIDGE_ARG`]); the exit code.
pub fn run(args: &[String]) -> i32 {
    let Some((port, socket, argv)) = parse(args) else {
        eprintln!("cairn net bridge: usage: --port P --socket PATH -- COMMAND...");
        return 125;
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cairn net bridge: {e}");
            return 125;
        }
    };
    rt.block_on(bridge(port, socket, argv))
}

fn parse(args: &[String]) -> Option<(u16, PathBuf, Vec<String>)> {
    let (mut port, mut socket) = (None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--port" => port = it.next()?.parse().ok(),
            "--socket" => socket = it.next().map(PathBuf::from),
            "--" => break,
            _ => return None,
        }
    }
    let argv: Vec<String> = it.cloned().collect();
    (!argv.is_empty()).then_some((port?, socket?, argv))
}

async fn bridge(port: u16, socket: PathBuf, argv: Vec<String>) -> i32 {
    let listener = match TcpListener::bind(("127.0.0.1", port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cairn net bridge: cannot listen on 127.0.0.1:{port}: {e}");
            return 125;
        }
    };
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            let socket = socket.clone();
            tokio::spawn(async move {
                if let Ok(mut unix) = UnixStream::connect(&socket).await {
                    let _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix).await;
                }
            });
        }
    });
    // Signals meant for the command (Ctrl-C on its terminal reaches both) do not end the
    // bridge under it; a handler, not an ignore, so the command gets the default back.
    let mut quiet = Vec::new();
    for kind in [
        tokio::signal::unix::SignalKind::interrupt(),
        tokio::signal::unix::SignalKind::quit(),
    ] {
        if let Ok(s) = tokio::signal::unix::signal(kind) {
            quiet.push(s);
        }
    }
    let (program, rest) = match argv.split_first() {
        Some(x) => x,
        None => return 125,
    };
    let mut child = match tokio::process::Command::new(program).args(rest).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn net bridge: cannot start {program}: {e}");
            return 127;
        }
    };
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let status = loop {
        tokio::select! {
            s = child.wait() => break s,
            _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending().await } } => {
                let _ = child.start_kill();
            }
        }
    };
    drop(quiet);
    match status {
        Ok(s) => {
            use std::os::unix::process::ExitStatusExt;
            s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
        }
        Err(_) => 125,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_parse_and_wrap_round_trip() {
        let a = vec![
            "/b".to_string(),
            crate::BRIDGE_ARG.into(),
            "--port".into(),
            crate::BRIDGE_PORT.to_string(),
            "--socket".into(),
            "/s".into(),
            "--".into(),
            "sh".into(),
            "-c".into(),
            "true".into(),
        ];
        let parsed = parse(&a[2..]);
        assert_eq!(
            parsed,
            Some((
                crate::BRIDGE_PORT,
                PathBuf::from("/s"),
                vec!["sh".into(), "-c".into(), "true".into()]
            ))
        );
        assert_eq!(parse(&["--port".into(), "1".into()]), None);
    }
}
