//! The network of sandboxed commands (issue 35). `--sandbox-network none`: a network
//! namespace of its own, so neither a loopback service of the desktop (a TCP server on
//! 127.0.0.1) nor an abstract unix socket (where an X server listens) is reachable; with
//! `open` both are, so the probes prove what they claim. `proxy` (the default): see
//! [`proxy`]. `cairn sandbox status` names the layer.

mod proxy;

use std::os::linux::net::SocketAddrExt;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::{cairn, finished_status, world};

/// Tries the TCP port and the abstract socket; writes what it reached to `file`.
fn probe(file: &str, port: u16, name: &str) -> String {
    format!(
        "python3 -c \"import socket\ntry:\n socket.create_connection(('127.0.0.1', {port}), 2); \
         print('tcp')\nexcept OSError: print('no-tcp')\ns = socket.socket(socket.AF_UNIX)\n\
         try:\n s.connect('\\0{name}'); print('abstract')\nexcept OSError: print('no-abstract')\" \
         > {file}"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn no_network_reaches_neither_loopback_services_nor_abstract_sockets() {
    if !super::sandbox_or_skip() {
        return;
    }
    let w = world();
    let name = format!("cairn-test-abstract-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let server = MockLlmServer::start().await.unwrap();
    let port = server.addr().port();
    for (net, file) in [("none", "none.txt"), ("open", "open.txt")] {
        server.push(Reply::tool_call(
            "a",
            "run_shell",
            json!({"command": probe(file, port, &name)}),
        ));
        server.push(Reply::text("done"));
        let out = cairn("auto")
            .args(["run", "--json", "--model", "m", "--mode", "auto"])
            .args(["--sandbox", "required", "--sandbox-network", net])
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
        assert_eq!(finished_status(&out), ["ok"], "{stderr}");
        // An open network is said on every run, even with --json.
        assert_eq!(
            stderr.contains("sandbox network: open (--sandbox-network open)"),
            net == "open",
            "{stderr}"
        );
    }
    let read = |f: &str| std::fs::read_to_string(w.ws.join(f)).unwrap();
    assert_eq!(
        read("open.txt"),
        "tcp\nabstract\n",
        "the probes reach nothing"
    );
    assert_eq!(read("none.txt"), "no-tcp\nno-abstract\n");
    let out = cairn("auto")
        .args(["sandbox", "status", "--json", "--sandbox", "required"])
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .output()
        .await
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["layers"][5]["name"], "network proxy");
    assert_eq!(report["layers"][5]["active"], true, "proxy is the default");
    let detail = report["layers"][5]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("proxy (--sandbox-network proxy, the default)"),
        "{detail}"
    );
}
