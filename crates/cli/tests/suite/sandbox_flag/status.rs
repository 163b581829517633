//! `cairn sandbox status` and the `sandbox` object of `turn_start` (issue 35): every layer is
//! named, active or not, with a reason; what `--json` runs report matches.

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::Value;

use super::{cairn, world};

const LAYERS: [&str; 6] = [
    "user namespaces",
    "allow-list home",
    "explicit environment",
    "seccomp",
    "new session",
    "network proxy",
];

fn layers(report: &Value) -> Vec<(String, bool)> {
    report["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert!(!l["detail"].as_str().unwrap().is_empty(), "{l}");
            (
                l["name"].as_str().unwrap().to_string(),
                l["active"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn status_and_turn_start_name_each_layer() {
    let here = super::sandbox_or_skip();
    let w = world();
    let status = |mode: &'static str| {
        let mut c = cairn("auto");
        c.args(["sandbox", "status", "--json", "--sandbox", mode])
            .arg("--workspace")
            .arg(&w.ws)
            .arg("--state-dir")
            .arg(&w.state);
        c
    };
    let out = status("off").output().await.unwrap();
    assert_eq!(out.status.code(), Some(0));
    let off: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(off["state"], "off");
    let names: Vec<String> = layers(&off).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, LAYERS);
    let human = cairn("auto")
        .args(["sandbox", "status", "--sandbox", "off"])
        .arg("--state-dir")
        .arg(&w.state)
        .current_dir(&w.ws)
        .output()
        .await
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.starts_with("sandbox: off\n"), "{text}");
    assert!(
        text.contains("seccomp") && text.contains("not active"),
        "{text}"
    );
    if !here {
        return;
    }
    let out = status("required").output().await.unwrap();
    let on: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(on["state"], "enforced");
    let active: Vec<bool> = layers(&on).into_iter().map(|(_, a)| a).collect();
    // The network proxy is the default (issue 35).
    assert_eq!(active, [true, true, true, true, true, true]);

    let server = MockLlmServer::with_script(vec![Reply::text("hi")])
        .await
        .unwrap();
    let out = cairn("auto")
        .args(["run", "--json", "--model", "m", "--sandbox", "required"])
        .arg("--workspace")
        .arg(&w.ws)
        .arg("--state-dir")
        .arg(&w.state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("hi")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let start: Value = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "turn_start")
        .unwrap();
    assert_eq!(start["data"]["sandbox"], on);
}
