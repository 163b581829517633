//! The desktop session does not reach a sandboxed command (issue 35): with a real
//! `dbus-daemon --session` and a real `ssh-agent` whose addresses are in Cairn's
//! environment, a sandboxed command sees neither variable, cannot reach the bus or the
//! agent even when it names their sockets itself, and gets none of `DISPLAY` or an unnamed
//! variable — while the vault entry, the `CAIRN_RUN` marker and a variable the user passes
//! through (`sandbox.toml` `env = ["JAVA_HOME"]`) are there. The same probes run unsandboxed
//! (`sandbox: false`, allowed) reach both, so they prove what they claim. A real Xvfb is out
//! of reach under `--sandbox-network none`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

use super::{cairn, finished_status, world};

/// Stops a daemon the test started, by its pid.
struct Daemon(i32);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.0),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

/// A child of the test, killed and reaped when dropped.
struct Reaped(std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A session bus listening on `socket`: its address and the daemon.
fn session_bus(socket: &Path) -> (String, Daemon) {
    let out = std::process::Command::new("dbus-daemon")
        .args(["--session", "--fork", "--print-address=1", "--print-pid=1"])
        .arg(format!("--address=unix:path={}", socket.display()))
        .stdin(Stdio::null())
        .output()
        .expect("dbus-daemon (scripts/setup.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let address = lines.next().unwrap().trim().to_string();
    let pid = lines.next().unwrap().trim().parse().unwrap();
    (address, Daemon(pid))
}

/// An ssh-agent listening on `socket`.
fn agent(socket: &Path) -> Daemon {
    let out = std::process::Command::new("ssh-agent")
        .arg("-s")
        .arg("-a")
        .arg(socket)
        .stdin(Stdio::null())
        .output()
        .expect("ssh-agent (openssh-client, scripts/setup.sh installs it)");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let pid = text
        .split("SSH_AGENT_PID=")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no agent pid in {text}"));
    Daemon(pid)
}

/// Files a desktop user has that no list names, removed when dropped.
struct Planted(Vec<PathBuf>);

impl Drop for Planted {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_dir_all(p);
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The probes, written to `file`: the environment, then the bus through the variable and
/// through its address, then the agent through its socket (`ssh-add -l`: 2 = unreachable),
/// then files no list names and the toolchain.
fn probes(file: &str, bus: &str, sock: &Path, files: &[PathBuf]) -> String {
    let mut reads = String::new();
    for f in files {
        reads.push_str(&format!(
            "if cat '{f}' >/dev/null 2>&1; then echo read; else echo unreadable; fi; ",
            f = f.display()
        ));
    }
    let list = "dbus-send --session --print-reply --dest=org.freedesktop.DBus \
                /org/freedesktop/DBus org.freedesktop.DBus.ListNames >/dev/null 2>&1";
    format!(
        "env > {file}.env; {{ echo ran; \
         if {list}; then echo bus-by-env; else echo no-bus-by-env; fi; \
         if DBUS_SESSION_BUS_ADDRESS='{bus}' {list}; then echo bus-by-address; \
         else echo no-bus-by-address; fi; \
         SSH_AUTH_SOCK='{sock}' ssh-add -l >/dev/null 2>&1; echo agent-$?; {reads}\
         if rustc --version >/dev/null 2>&1; then echo rustc-runs; else echo no-rustc; fi; \
         }} > {file}",
        sock = sock.display()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_bus_the_agent_and_the_display_stay_outside() {
    if !super::sandbox_or_skip() {
        return;
    }
    let w = world();
    // Where a desktop keeps them: the user's runtime folder.
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
    let run_dir = PathBuf::from(format!("/run/user/{uid}/cairn-test-{}", std::process::id()));
    std::fs::create_dir_all(&run_dir).unwrap();
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap();
    let tag = format!("cairn-test-{}", std::process::id());
    let credential = home.join(format!(".{tag}-token"));
    let srv = PathBuf::from(format!("/srv/{tag}"));
    let other_home = PathBuf::from(format!("/home/{tag}"));
    let _planted = Planted(vec![
        run_dir.clone(),
        credential.clone(),
        srv.clone(),
        other_home.clone(),
    ]);
    std::fs::write(&credential, "secret-token\n").unwrap();
    let mut files = vec![credential];
    // /srv and another user's home: where this test may create them (CI runs as root).
    for dir in [&srv, &other_home] {
        if std::fs::create_dir_all(dir).is_ok() {
            std::fs::write(dir.join("secret"), "x\n").unwrap();
            files.push(dir.join("secret"));
        }
    }
    if uid == 0 {
        files.push(PathBuf::from("/etc/shadow"));
    }
    let (bus, _bus) = session_bus(&run_dir.join("bus"));
    let sock = run_dir.join("agent.sock");
    let _agent = agent(&sock);
    std::fs::write(
        w.state.join("vault.toml"),
        "MY_VAULT_VAR = \"vault-value-123\"\n",
    )
    .unwrap();
    let settings = w.state.join("sandbox.toml");
    std::fs::write(&settings, "env = [\"JAVA_HOME\"]\n").unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "a",
            "run_shell",
            json!({"command": probes("inside.txt", &bus, &sock, &files)}),
        )
        .with_tool_call(
            "b",
            "run_shell",
            json!({"command": probes("outside.txt", &bus, &sock, &files), "sandbox": false}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = cairn("auto")
        .args(["run", "--json", "--model", "m", "--mode", "auto"])
        .args(["--approve", "allow", "--sandbox", "required"])
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("go")
        .env("CAIRN_SANDBOX_FILE", &settings)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus)
        .env("SSH_AUTH_SOCK", &sock)
        .env("DISPLAY", ":77")
        .env("XAUTHORITY", w.outside.join("Xauthority"))
        .env("JAVA_HOME", "/opt/jdk-test")
        .env("CAIRN_TEST_UNNAMED", "unnamed-value")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(finished_status(&out), ["ok", "ok"], "{stderr}");
    let read = |f: &str| std::fs::read_to_string(w.ws.join(f)).unwrap();
    let expect = |bus: &str, agent: &str, file: &str| {
        let mut s = format!("ran\n{bus}-by-env\n{bus}-by-address\nagent-{agent}\n");
        s.push_str(&format!("{file}\n").repeat(files.len()));
        s.push_str("rustc-runs\n");
        s
    };
    assert_eq!(
        read("outside.txt"),
        expect("bus", "1", "read"),
        "the probes do not reach the bus, the agent or the files even unsandboxed"
    );
    assert_eq!(read("inside.txt"), expect("no-bus", "2", "unreadable"));
    let env = read("inside.txt.env");
    for gone in [
        "DBUS_SESSION_BUS_ADDRESS=",
        "SSH_AUTH_SOCK=",
        "DISPLAY=",
        "XAUTHORITY=",
        "CAIRN_TEST_UNNAMED=",
        "OPENAI_API_KEY=",
    ] {
        assert!(
            !env.lines().any(|l| l.starts_with(gone)),
            "{gone} inside: {env}"
        );
    }
    for present in [
        "MY_VAULT_VAR=vault-value-123",
        "JAVA_HOME=/opt/jdk-test",
        "CAIRN_RUN=",
        "PATH=",
        "HOME=",
        "TMPDIR=/tmp",
    ] {
        assert!(
            env.lines().any(|l| l.starts_with(present)),
            "{present} missing inside: {env}"
        );
    }
    // Unsandboxed commands keep today's environment (credentials removed).
    let outside = read("outside.txt.env");
    assert!(
        outside.contains("CAIRN_TEST_UNNAMED=unnamed-value"),
        "{outside}"
    );
}

/// An X server (Xvfb) with no access control (`-ac`: a desktop that lets the user's local
/// clients in without a cookie behaves alike): the display stays out of reach of a
/// sandboxed command under `--sandbox-network none` even when the command names it itself,
/// through the path socket (private `/tmp`) or the abstract one (own network namespace),
/// while the same probe unsandboxed reaches it.
#[tokio::test(flavor = "multi_thread")]
async fn no_x_display_is_reachable_without_the_network() {
    if !super::sandbox_or_skip() {
        return;
    }
    let w = world();
    let mut xvfb = std::process::Command::new("Xvfb")
        .args(["-displayfd", "1", "-ac", "-nolisten", "tcp"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb (scripts/setup.sh installs it)");
    // Xvfb writes its display number once it accepts clients.
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(xvfb.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let _x = Reaped(xvfb);
    let display = format!(":{}", line.trim());
    let probe = |file: &str| {
        format!(
            "if DISPLAY={display} xdpyinfo >/dev/null 2>&1; then echo x-reached > {file}; \
             else echo no-x > {file}; fi"
        )
    };
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({"command": probe("inside.txt")})).with_tool_call(
            "b",
            "run_shell",
            json!({"command": probe("outside.txt"), "sandbox": false}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = cairn("auto")
        .args(["run", "--json", "--model", "m", "--mode", "auto"])
        .args(["--approve", "allow", "--sandbox", "required"])
        .args(["--sandbox-network", "none"])
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("go")
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(finished_status(&out), ["ok", "ok"], "{stderr}");
    let read = |f: &str| std::fs::read_to_string(w.ws.join(f)).unwrap();
    assert_eq!(
        read("outside.txt"),
        "x-reached\n",
        "the probe cannot reach X at all"
    );
    assert_eq!(read("inside.txt"), "no-x\n");
}
