//! `cairn run --approve ask` on a pseudo-terminal: what the tests see on screen, and typing.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::Read;
use std::path::Path;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};

/// A `cairn run --approve ask` process on a pseudo-terminal.
pub struct TtyRun {
    /// The process.
    pub child: Box<dyn Child + Send + Sync>,
    /// The terminal's master side (kept open while the process runs).
    pub master: Box<dyn MasterPty + Send>,
    /// Everything the terminal showed so far.
    pub shown: Arc<Mutex<String>>,
    /// Disconnected once the terminal's reader saw its end (everything shown is in `shown`).
    read_all: mpsc::Receiver<()>,
}

/// Starts `cairn run --model m --approve ask --vcs off` with `prompt` in `ws` on a terminal.
pub fn start(ws: &Path, state: &Path, base_url: &str, prompt: &str) -> TtyRun {
    start_with(ws, state, base_url, prompt, "off", &[])
}

/// [`start_with`] plus environment variables `envs`.
pub fn start_with_env(
    ws: &Path,
    state: &Path,
    base_url: &str,
    prompt: &str,
    extra: &[&str],
    envs: &[(&str, &Path)],
) -> TtyRun {
    start_inner(ws, state, base_url, prompt, "off", extra, envs)
}

/// [`start`] with `CAIRN_SANDBOX=sandbox` and `extra` arguments before the prompt.
pub fn start_with(
    ws: &Path,
    state: &Path,
    base_url: &str,
    prompt: &str,
    sandbox: &str,
    extra: &[&str],
) -> TtyRun {
    start_inner(ws, state, base_url, prompt, sandbox, extra, &[])
}

fn start_inner(
    ws: &Path,
    state: &Path,
    base_url: &str,
    prompt: &str,
    sandbox: &str,
    extra: &[&str],
    envs: &[(&str, &Path)],
) -> TtyRun {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(["run", "--model", "m", "--approve", "ask", "--vcs", "off"]);
    for (flag, value) in [
        ("--workspace", ws.as_os_str()),
        ("--state-dir", state.as_os_str()),
        ("--base-url", base_url.as_ref()),
    ] {
        cmd.arg(flag);
        cmd.arg(value);
    }
    cmd.args(extra);
    cmd.arg(prompt);
    cmd.env("OPENAI_API_KEY", "k");
    cmd.env("CAIRN_PERMISSIONS_FILE", state.join("no-rules.toml"));
    cmd.env("CAIRN_SANDBOX", sandbox);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.cwd(ws);
    let child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let shown = Arc::new(Mutex::new(String::new()));
    let sink = shown.clone();
    let (reading, read_all) = mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _reading = reading;
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    TtyRun {
        child,
        master: pair.master,
        shown,
        read_all,
    }
}

impl TtyRun {
    /// Waits (up to 60 s) until the terminal shows `text`.
    pub fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.shown.lock().unwrap().contains(text) {
            assert!(
                Instant::now() < deadline,
                "`{text}` never shown; terminal showed: {}",
                self.shown.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit and for the terminal to show all it wrote; its exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let status = self.child.wait().unwrap();
        let ended = self.read_all.recv_timeout(Duration::from_secs(30));
        assert!(
            matches!(ended, Err(mpsc::RecvTimeoutError::Disconnected)),
            "the terminal stayed open after the process exited"
        );
        status.exit_code()
    }

    /// Everything the terminal showed so far.
    pub fn text(&self) -> String {
        self.shown.lock().unwrap().clone()
    }
}
