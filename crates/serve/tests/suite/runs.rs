//! Runs: the attached stream, the session's event stream with replay, runs queued in post
//! order, interrupt and disconnects, restart.

use std::time::{Duration, Instant};

use cairn_testkit::Reply;
use serde_json::{json, Value};

use super::harness::{eventually, read_all, read_until, types, Server};

#[tokio::test]
async fn an_attached_turn_streams_the_cli_json_lines_and_ends_with_run_end() {
    let s = Server::start(|_| {}).await;
    s.mock.push(Reply::text("hello there"));
    let id = s.session("auto").await;
    let v = s.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(v["state"], "idle");
    assert_eq!(v["mode"], "auto");
    let r = s.message(&id, "hi").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert_eq!(r.headers()["cache-control"], "no-store");
    assert_eq!(r.headers()["x-accel-buffering"], "no");
    let events = read_all(r).await;
    let t = types(&events);
    assert_eq!(t.first(), Some(&"turn_start"), "{t:?}");
    assert_eq!(t.last(), Some(&"run_end"), "{t:?}");
    assert!(t.contains(&"turn_end"));
    for e in &events {
        // data is the whole `cairn run --json` line.
        assert_eq!(e.data["type"], e.event.as_str());
        assert!(e.id.is_some());
    }
    assert_eq!(events[0].data["data"]["sessionId"], id.as_str());
    let text: String = events
        .iter()
        .filter(|e| e.event == "assistant_delta")
        .map(|e| e.data["data"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "hello there");
    let end = &events.last().unwrap().data["data"];
    assert_eq!(end["kind"], "ended");
    assert_eq!(end["status"], "completed");
    assert_eq!(end["turns"], 1);
    let v = s.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(v["turns"], 1);
    assert_eq!(v["lastStatus"], "completed");
    // The session is listed, newest first.
    let list = s.get_json("/v1/sessions").await;
    assert_eq!(list["sessions"][0]["id"], id.as_str());

    // The event stream replays after an id, from the start, and asks for a resync when
    // the id is not this process's.
    let second = &events[1];
    let r = s
        .get(&format!("/v1/sessions/{id}/events"))
        .header("Last-Event-ID", second.id.clone().unwrap())
        .send()
        .await
        .unwrap();
    let n = events.len();
    let replay = read_until(r, |got| got.len() >= n - 2).await;
    assert_eq!(replay[0].id, events[2].id);
    assert_eq!(replay.last().unwrap().event, "run_end");
    let r = s
        .get(&format!("/v1/sessions/{id}/events?from=start"))
        .send()
        .await
        .unwrap();
    let all = read_until(r, |got| got.len() >= n).await;
    assert_eq!(types(&all), types(&events));
    let r = s
        .get(&format!("/v1/sessions/{id}/events?after=0123456789ab-3"))
        .send()
        .await
        .unwrap();
    let first = read_until(r, |got| !got.is_empty()).await;
    assert_eq!(first[0].event, "resync");
    assert_eq!(
        first[0].data,
        json!({"type": "resync", "data": {"reason": "expired"}})
    );
}

#[tokio::test]
async fn messages_run_in_post_order_attached_or_detached_and_the_queue_is_bounded() {
    let s = Server::start(|_| {}).await;
    s.mock.hold_when_empty(true);
    let id = s.session("auto").await;
    let path = format!("/v1/sessions/{id}/messages");
    let r = s
        .post(&path, json!({"text": "one", "detach": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    assert_eq!(
        r.json::<Value>().await.unwrap(),
        json!({"sessionId": id, "queued": 0})
    );
    s.mock.wait_for_requests(1, Duration::from_secs(10)).await;
    let r = s
        .post(&path, json!({"text": "two", "detach": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["queued"], 1);
    let third = s
        .post(&path, json!({"text": "three"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        third.status(),
        200,
        "the stream starts at once, while queued"
    );
    let v = s.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(v["state"], "running");
    assert_eq!(v["queued"], 2);
    // Busy: restore waits for the queue.
    let r = s
        .post(&format!("/v1/sessions/{id}/restore"), json!({"toTurn": 0}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "session_busy"
    );
    for i in 0..14 {
        let r = s
            .post(&path, json!({"text": format!("more {i}"), "detach": true}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
    }
    let r = s
        .post(&path, json!({"text": "one too many", "detach": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "queue_full"
    );
    // Drop the extra ones, keep "two" and "three" running in order.
    let r = s
        .post(&format!("/v1/sessions/{id}/interrupt"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v, json!({"interrupted": true, "dropped": 0}));
    s.mock.push(Reply::text("two done"));
    // "three" starts once "two" ended; the 14 behind it are dropped then.
    let events = read_until(third, |got| got.iter().any(|e| e.event == "turn_start")).await;
    assert_eq!(events[0].data["data"]["input"], "three");
    let r = s
        .post(
            &format!("/v1/sessions/{id}/interrupt"),
            json!({"dropQueued": true}),
        )
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v, json!({"interrupted": true, "dropped": 14}));
    s.mock.wait_for_requests(3, Duration::from_secs(10)).await;
    // The model saw one, two, three in that order.
    let inputs: Vec<String> = s
        .mock
        .requests()
        .iter()
        .map(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .rev()
                .find(|m| m["role"] == "user")
                .unwrap()["content"]
                .to_string()
        })
        .collect();
    assert!(inputs[0].contains("one"), "{inputs:?}");
    assert!(inputs[1].contains("two"), "{inputs:?}");
    assert!(inputs[2].contains("three"), "{inputs:?}");
}

#[tokio::test]
async fn a_client_that_goes_away_interrupts_its_run_within_two_seconds() {
    let s = Server::start(|_| {}).await;
    s.mock.hold_when_empty(true);
    let id = s.session("auto").await;
    let events = s.events(&id).await;
    let r = s.message(&id, "long").await;
    assert_eq!(r.status(), 200);
    s.mock.wait_for_requests(1, Duration::from_secs(10)).await;
    // No event flows now (the model holds); the client leaves.
    let gone = Instant::now();
    drop(r);
    let seen = read_until(events, |got| got.iter().any(|e| e.event == "run_end")).await;
    let took = gone.elapsed();
    eprintln!("the disconnect was noticed after {took:?}");
    assert!(took < Duration::from_secs(3), "noticed after {took:?}");
    let t = types(&seen);
    assert!(t.contains(&"interrupted"), "{t:?}");
    let end = seen.iter().find(|e| e.event == "turn_end").unwrap();
    assert_eq!(end.data["data"]["status"], "interrupted");
}

#[tokio::test]
async fn steering_reaches_the_running_turn_and_can_be_withdrawn() {
    let s = Server::start(|_| {}).await;
    s.mock.hold_when_empty(true);
    let id = s.session("auto").await;
    let r = s
        .post(&format!("/v1/sessions/{id}/steering"), json!({"text": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "session_idle"
    );
    let run = s.message(&id, "work").await;
    s.mock.wait_for_requests(1, Duration::from_secs(10)).await;
    let v: Value = s
        .post(
            &format!("/v1/sessions/{id}/steering"),
            json!({"text": "also this"}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["pending"][0]["text"], "also this");
    let v: Value = s
        .post(
            &format!("/v1/sessions/{id}/steering"),
            json!({"text": "and that"}),
        )
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let withdraw = v["pending"][0]["steerId"].as_str().unwrap().to_string();
    let r = s
        .http
        .delete(s.url(&format!("/v1/sessions/{id}/steering/{withdraw}")))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["removed"], true);
    assert_eq!(v["pending"].as_array().unwrap().len(), 1);
    assert_eq!(v["pending"][0]["text"], "and that");
    s.mock.push(Reply::text("first part"));
    s.mock.push(Reply::text("steered part"));
    let events = read_all(run).await;
    let steered: Vec<_> = events
        .iter()
        .filter(|e| {
            e.event == "queue_steering"
                || (e.event == "turn_start" && e.data["data"]["source"] == "steering")
        })
        .collect();
    assert!(!steered.is_empty(), "{:?}", types(&events));
    assert_eq!(events.last().unwrap().event, "run_end");
}

#[tokio::test]
async fn a_restart_keeps_sessions_and_they_continue_with_their_history() {
    let mut s = Server::start(|_| {}).await;
    s.mock.push(Reply::text("first answer"));
    let id = s.session("plan").await;
    s.turn(&id, "remember 42").await;
    s.stop().await;
    let cfg = super::harness::config(&s.mock, s.dir.path(), s.state.path());
    let running = cairn_serve::start(cfg).await.unwrap();
    s.base = format!("http://{}", running.listen);
    s.running = Some(running);
    let list = s.get_json("/v1/sessions").await;
    let row = &list["sessions"][0];
    assert_eq!(row["id"], id.as_str());
    assert_eq!(row["state"], "closed");
    assert_eq!(row["mode"], "plan");
    assert_eq!(row["turns"], 1);
    s.mock.push(Reply::text("second answer"));
    let events = s.turn(&id, "what was it?").await;
    assert_eq!(events.last().unwrap().data["data"]["status"], "completed");
    let last = s.mock.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("remember 42") && last.contains("first answer"),
        "{last}"
    );
    let v = s.get_json(&format!("/v1/sessions/{id}")).await;
    assert_eq!(v["turns"], 2);
    assert_eq!(v["mode"], "plan");
    s.stop().await;
}

#[tokio::test]
async fn sessions_are_capped_patched_and_closed() {
    let s = Server::start(|c| c.max_sessions = 1).await;
    let id = s.session("interactive").await;
    let r = s
        .post("/v1/sessions", json!({"workspace": s.ws.path()}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 429);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "too_many_sessions"
    );
    let r = s
        .http
        .patch(s.url(&format!("/v1/sessions/{id}")))
        .bearer_auth(&s.token)
        .json(&json!({"name": "renamed", "mode": "discuss", "model": "m2"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["name"], "renamed");
    assert_eq!(v["mode"], "discuss");
    assert_eq!(v["model"], "m2");
    let r = s
        .post(&format!("/v1/sessions/{id}/close"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(eventually(|| async { s.running.as_ref().unwrap().open_sessions() == 0 }).await);
    // Closed, a slot is free again.
    assert_eq!(
        s.post("/v1/sessions", json!({"workspace": s.ws.path()}))
            .send()
            .await
            .unwrap()
            .status(),
        201
    );
}

#[tokio::test]
async fn a_slow_reader_is_cut_off_and_its_run_interrupted() {
    let s = Server::start(|_| {}).await;
    // Far more output than the 8 MiB a stream may hold unsent plus what the sockets buffer.
    let big = "x".repeat(40 * 1024 * 1024);
    s.mock.push(Reply::text(&big).chunk_size(256 * 1024));
    let id = s.session("auto").await;
    // The attached client never reads its stream.
    let stalled = s.message(&id, "talk a lot").await;
    assert_eq!(stalled.status(), 200);
    let path = format!("/v1/sessions/{id}");
    assert!(
        eventually(|| async {
            let v = s.get_json(&path).await;
            v["lastStatus"] == "interrupted" && v["state"] == "idle"
        })
        .await,
        "the run was interrupted"
    );
    // The stalled connection was closed, not buffered: reading it now ends early.
    let mut body = stalled.bytes_stream();
    let mut got = 0usize;
    let mut failed = false;
    while let Some(chunk) = futures::StreamExt::next(&mut body).await {
        match chunk {
            Ok(c) => got += c.len(),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(
        failed,
        "the cut-off stream ends with an error, after {got} bytes"
    );
    assert!(got < big.len(), "{got}");
}

#[tokio::test]
async fn an_idle_session_is_closed_and_one_without_turns_forgotten() {
    let s = Server::start(|c| c.idle_close = Duration::from_millis(300)).await;
    s.mock.push(Reply::text("kept"));
    let kept = s.session("auto").await;
    s.turn(&kept, "hi").await;
    let empty = s.session("auto").await;
    assert!(
        eventually(|| async {
            s.get(&format!("/v1/sessions/{empty}"))
                .send()
                .await
                .unwrap()
                .status()
                == 404
        })
        .await,
        "a session without turns is forgotten"
    );
    assert!(
        eventually(|| async {
            s.get_json(&format!("/v1/sessions/{kept}")).await["state"] == "closed"
        })
        .await,
        "closed once nothing uses it"
    );
    assert_eq!(
        s.get_json(&format!("/v1/sessions/{kept}")).await["turns"],
        1
    );
}

#[tokio::test]
async fn max_turns_caps_turns_across_the_server() {
    let s = Server::start(|c| c.max_turns = Some(1)).await;
    s.mock.hold_when_empty(true);
    let a = s.session("auto").await;
    let b = s.session("auto").await;
    for id in [&a, &b] {
        let r = s
            .post(
                &format!("/v1/sessions/{id}/messages"),
                json!({"text": "go", "detach": true}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 202);
    }
    s.mock.wait_for_requests(1, Duration::from_secs(10)).await;
    // One turn runs; the other waits for the server's slot, not for the model.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(s.mock.requests().len(), 1);
    assert_eq!(
        s.get_json(&format!("/v1/sessions/{b}")).await["state"],
        "running"
    );
    s.mock.push(Reply::text("first"));
    assert_eq!(
        s.mock
            .wait_for_requests(2, Duration::from_secs(10))
            .await
            .len(),
        2
    );
    s.mock.push(Reply::text("second"));
}

#[tokio::test]
async fn a_session_closed_ends_its_event_stream_and_its_attached_run() {
    let s = Server::start(|_| {}).await;
    s.mock.hold_when_empty(true);
    let id = s.session("auto").await;
    let events = s.events(&id).await;
    let run = s.message(&id, "go").await;
    s.mock.wait_for_requests(1, Duration::from_secs(10)).await;
    let r = s
        .post(&format!("/v1/sessions/{id}/close"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let streamed = read_all(run).await;
    let t = types(&streamed);
    assert!(
        t.contains(&"interrupted") && t.last() == Some(&"run_end"),
        "{t:?}"
    );
    // The events stream ends (read_all returns) with the same events.
    let seen = read_all(events).await;
    assert_eq!(types(&seen), t);
}

#[tokio::test]
async fn retry_with_nothing_to_retry_and_slash_commands_end_as_the_contract_says() {
    let s = Server::start(|_| {}).await;
    let id = s.session("interactive").await;
    let path = format!("/v1/sessions/{id}/messages");
    let r = s.post(&path, json!({"retry": true})).send().await.unwrap();
    let events = read_all(r).await;
    assert_eq!(
        events.last().unwrap().data,
        json!({"type": "run_end", "data": {"kind": "not_started"}})
    );
    let r = s.post(&path, json!({"resume": true})).send().await.unwrap();
    let events = read_all(r).await;
    assert_eq!(events.last().unwrap().data["data"]["kind"], "not_started");
    // A leading /command runs no model turn.
    let r = s
        .post(&path, json!({"text": "/mode plan"}))
        .send()
        .await
        .unwrap();
    let events = read_all(r).await;
    let end = &events.last().unwrap().data["data"];
    assert_eq!(end["kind"], "command", "{end}");
    assert_eq!(
        end["outcome"]["effect"],
        json!({"kind": "mode", "mode": "plan"})
    );
    assert_eq!(
        s.get_json(&format!("/v1/sessions/{id}")).await["mode"],
        "plan"
    );
    assert!(s.mock.requests().is_empty(), "no model request");
    // Exactly one of text, retry, resume.
    let r = s
        .post(&path, json!({"text": "x", "retry": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = s.post(&path, json!({"detach": true})).send().await.unwrap();
    assert_eq!(r.status(), 400);
}

#[tokio::test]
async fn a_session_is_named_after_its_first_turn_unless_the_user_named_it() {
    let s = Server::start(|_| {}).await;
    let id = s.session("auto").await;
    let events = s.events(&id).await;
    s.mock.push(Reply::text("sure"));
    s.turn(&id, "Refactor the parser module").await;
    let got = read_until(events, |got| got.iter().any(|e| e.event == "session_named")).await;
    let named = got.iter().find(|e| e.event == "session_named").unwrap();
    assert_eq!(named.data["data"]["source"], "auto");
    let name = named.data["data"]["name"].as_str().unwrap().to_string();
    assert!(name.contains("Refactor the parser"), "{name}");
    assert_eq!(
        s.get_json(&format!("/v1/sessions/{id}")).await["name"],
        name.as_str()
    );
    // Once: a second turn names nothing again.
    s.mock.push(Reply::text("again"));
    s.turn(&id, "and the lexer").await;
    let r = s
        .get(&format!("/v1/sessions/{id}/events?from=start"))
        .send()
        .await
        .unwrap();
    let all = read_until(r, |got| {
        got.iter().filter(|e| e.event == "run_end").count() == 2
    })
    .await;
    assert_eq!(all.iter().filter(|e| e.event == "session_named").count(), 1);

    // A session the user named keeps its name; the only `session_named` is the user's.
    let other = s.session("auto").await;
    let r = s
        .http
        .patch(s.url(&format!("/v1/sessions/{other}")))
        .bearer_auth(&s.token)
        .json(&json!({"name": "Mine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    s.mock.push(Reply::text("ok"));
    s.turn(&other, "something else entirely").await;
    // A marker after the turn: the stream is read up to it, past where a name would come.
    s.mock.push(Reply::text("marker"));
    s.turn(&other, "marker").await;
    let r = s
        .get(&format!("/v1/sessions/{other}/events?from=start"))
        .send()
        .await
        .unwrap();
    let all = read_until(r, |got| {
        got.iter().filter(|e| e.event == "run_end").count() == 2
    })
    .await;
    let sources: Vec<&Value> = all
        .iter()
        .filter(|e| e.event == "session_named")
        .map(|e| &e.data["data"]["source"])
        .collect();
    assert_eq!(sources, [&json!("user")]);
    assert_eq!(
        s.get_json(&format!("/v1/sessions/{other}")).await["name"],
        "Mine"
    );
}

#[tokio::test]
async fn an_idle_event_stream_gets_keepalive_comments() {
    let s = Server::start(|c| c.keepalive = Duration::from_millis(200)).await;
    let id = s.session("auto").await;
    let r = s.events(&id).await;
    assert_eq!(r.status(), 200);
    let mut body = r.bytes_stream();
    let mut seen = String::new();
    let got = tokio::time::timeout(Duration::from_secs(10), async {
        use futures::StreamExt;
        while let Some(Ok(chunk)) = body.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.matches(": keepalive\n\n").count() >= 2 {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(got, Ok(true), "{seen:?}");
    // Only comments: no event was sent on the idle stream.
    assert!(!seen.contains("event:"), "{seen:?}");
}

/// Issue 44: steering takes attachments as a message does; an inline image reaches the model
/// as an image with the steering's words, a text file by path as its text.
#[tokio::test]
async fn steering_with_an_image_and_a_file_reaches_the_model() {
    use base64::Engine;
    let s = Server::start(|_| {}).await;
    s.mock.hold_when_empty(true);
    std::fs::write(s.ws.path().join("spec.txt"), "SPEC-SAYS-42").unwrap();
    let id = s.session("auto").await;
    let run = s.message(&id, "work").await;
    s.mock.wait_for_requests(1, Duration::from_secs(10)).await;
    let png =
        base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nfake-image-bytes");
    let r = s
        .post(
            &format!("/v1/sessions/{id}/steering"),
            json!({"text": "look at this screenshot", "attachments": [
                {"mediaType": "image/png", "base64": png},
                {"path": "spec.txt"},
            ]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let v: Value = r.json().await.unwrap();
    assert!(
        v["pending"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("look at this screenshot"),
        "{v}"
    );
    std::fs::write(
        s.ws.path().parent().unwrap().join("outside-secret.txt"),
        "OUTSIDE-SECRET",
    )
    .ok();
    // A bad attachment is refused before anything is queued; so is a file outside the
    // workspace (an attacker's path in steering is not a way out of the workspace).
    for bad in [
        json!({"mediaType": "image/png"}),
        json!({"path": "../outside-secret.txt"}),
        json!({"path": "/etc/passwd"}),
    ] {
        let r = s
            .post(
                &format!("/v1/sessions/{id}/steering"),
                json!({"text": "x", "attachments": [bad]}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{bad}");
    }
    s.mock.push(Reply::text("first part"));
    s.mock.push(Reply::text("I see it"));
    let events = read_all(run).await;
    assert_eq!(events.last().unwrap().event, "run_end");
    let steered = s
        .mock
        .requests()
        .into_iter()
        .map(|r| r.body.to_string())
        .find(|b| b.contains("look at this screenshot"))
        .expect("a request with the steering");
    assert!(steered.contains("data:image/png;base64,"), "{steered}");
    assert!(steered.contains("SPEC-SAYS-42"), "{steered}");
    let all: String = s
        .mock
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        !all.contains("root:x:0:0"),
        "/etc/passwd never reached the model"
    );
    assert!(
        !all.contains("OUTSIDE-SECRET"),
        "a file outside the workspace never did"
    );
}
