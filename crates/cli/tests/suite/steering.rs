//! `cairn run --steer-from PATH` (issue 44): lines written while the run goes are queued as
//! steering; a JSON line's image reaches the model as an image with the words.

use std::io::Write;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::json_run;

#[tokio::test]
async fn a_steering_line_with_an_image_reaches_the_running_turn_as_an_image() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let fifo = state.path().join("steer.fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let shot = ws.path().join("shot.png");
    std::fs::write(&shot, b"\x89PNG\r\n\x1a\nfake-image-bytes").unwrap();
    let server = MockLlmServer::start().await.unwrap();
    server.hold_when_empty(true);
    let mut c = json_run::cmd(
        ws.path(),
        state.path(),
        &server,
        &[
            "--json",
            "--approve",
            "allow",
            "--vcs",
            "off",
            "--steer-from",
            fifo.to_str().unwrap(),
            "work",
        ],
    );
    let mut child = c.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let stdout = child.stdout.take().unwrap();
    let collected = tokio::spawn(async move {
        let mut lines = BufReader::new(stdout).lines();
        let mut all = Vec::new();
        while let Ok(Some(l)) = lines.next_line().await {
            all.push(l);
        }
        all
    });
    // The model is working on the prompt (its request is held): the user steers.
    server.wait_for_requests(1, Duration::from_secs(60)).await;
    let line = serde_json::json!({"text": "look at this screenshot", "attach": [shot]});
    let path = fifo.clone();
    tokio::task::spawn_blocking(move || {
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        writeln!(f, "{line}").unwrap();
    })
    .await
    .unwrap();
    let mut seen = Vec::new();
    loop {
        let l = tokio::time::timeout(Duration::from_secs(30), stderr.next_line())
            .await
            .expect("an acknowledgement in time")
            .unwrap()
            .unwrap_or_else(|| panic!("stderr ended: {seen:?}"));
        let queued = l.starts_with("steering queued: look at this screenshot (+1 file(s))");
        seen.push(l);
        if queued {
            break;
        }
    }
    server.push(Reply::text("first part"));
    server.push(Reply::text("I see it"));
    let status = tokio::time::timeout(Duration::from_secs(60), child.wait())
        .await
        .expect("cairn finished in time")
        .unwrap();
    assert_eq!(status.code(), Some(0), "{seen:?}");
    let events: Vec<serde_json::Value> = collected
        .await
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let steered = json_run::of_type(&events, "queue_steering");
    assert_eq!(steered.len(), 1, "{events:?}");
    assert_eq!(steered[0]["data"]["attachments"][0]["name"], "shot.png");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let second = reqs[1].body.to_string();
    assert!(second.contains("look at this screenshot"), "{second}");
    assert!(second.contains("data:image/png;base64,"), "{second}");
    assert!(
        !reqs[0].body.to_string().contains("data:image/png"),
        "the image goes with the steering only"
    );
}
