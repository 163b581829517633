//! Origin → Host → token, in that order, on every route; the conventions every response
//! follows; malformed requests.

use serde_json::{json, Value};

use super::harness::Server;

#[tokio::test]
async fn the_token_gates_every_route_but_healthz() {
    let s = Server::start(|_| {}).await;
    let r = s.http.get(s.url("/healthz")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["cache-control"], "no-store");
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"ok": true}));

    for (method, path) in [
        ("GET", "/v1/sessions"),
        ("POST", "/v1/sessions"),
        ("GET", "/v1/pending"),
    ] {
        let req = s.http.request(method.parse().unwrap(), s.url(path));
        let r = req.try_clone().unwrap().send().await.unwrap();
        assert_eq!(r.status(), 401, "{method} {path}");
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthorized");
        let r = req.bearer_auth("x".repeat(43)).send().await.unwrap();
        assert_eq!(r.status(), 401, "wrong token on {method} {path}");
    }
    // The request had no effect: no session was created.
    let list = s.get_json("/v1/sessions").await;
    assert_eq!(list["sessions"], json!([]));
    // Never from the URL.
    let r = s
        .http
        .get(s.url(&format!("/v1/sessions?access_token={}", s.token)))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn origin_is_checked_before_host_and_host_before_the_token() {
    let s = Server::start(|c| c.allow_origins = vec!["http://app.example:8080".into()]).await;
    // A browser page of another origin: refused before anything else, even with the token.
    for origin in ["http://evil.example", "null"] {
        let r = s
            .get("/v1/sessions")
            .header("Origin", origin)
            .header("Host", "evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403);
        assert_eq!(r.headers()["cache-control"], "no-store");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], "origin_forbidden", "{origin}");
    }
    // DNS rebinding: the right origin but another Host, no token: the Host check comes first.
    let r = s
        .http
        .get(s.url("/v1/sessions"))
        .header("Host", "rebound.example:80")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "host_forbidden"
    );
    // An allowed origin: CORS headers, and preflights answered without the token.
    let r = s
        .get("/v1/sessions")
        .header("Origin", "http://app.example:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "http://app.example:8080"
    );
    assert_eq!(r.headers()["vary"], "Origin");
    let r = s
        .http
        .request(reqwest::Method::OPTIONS, s.url("/v1/sessions"))
        .header("Origin", "http://app.example:8080")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let allowed = r.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_string();
    for h in ["Authorization", "Content-Type", "Last-Event-ID"] {
        assert!(allowed.contains(h), "{allowed}");
    }
    // localhost:PORT names the listening address too.
    let port = s.base.rsplit(':').next().unwrap();
    let r = s
        .get("/v1/pending")
        .header("Host", format!("localhost:{port}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn malformed_requests_get_the_error_shape() {
    let s = Server::start(|_| {}).await;
    let code = |v: Value| v["error"]["code"].as_str().unwrap().to_string();
    // Not JSON as a type.
    let r = s.get("/v1/sessions").send().await.unwrap();
    assert_eq!(r.status(), 200);
    let r = s
        .http
        .post(s.url("/v1/sessions"))
        .bearer_auth(&s.token)
        .header("Content-Type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    assert_eq!(code(r.json().await.unwrap()), "unsupported_media_type");
    // Not a JSON object.
    for body in ["[1]", "{not json", "\"s\""] {
        let r = s
            .http
            .post(s.url("/v1/sessions"))
            .bearer_auth(&s.token)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{body}");
        assert_eq!(code(r.json().await.unwrap()), "invalid_json");
    }
    // A missing field, an unknown one (a typo must not change what happens).
    let r = s.post("/v1/sessions", json!({})).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(code(r.json().await.unwrap()), "invalid_request");
    let id = s.session("auto").await;
    let r = s
        .post(
            &format!("/v1/sessions/{id}/messages"),
            json!({"text": "hi", "detatch": true}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(code(v.clone()), "invalid_request");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("detatch"),
        "{v}"
    );
    // Too large, from Content-Length.
    let big = json!({"text": "x".repeat(1024 * 1024 + 10)});
    let r = s
        .post(&format!("/v1/sessions/{id}/messages"), big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(code(r.json().await.unwrap()), "body_too_large");
    // Chunked: counted while reading.
    let chunks = futures::stream::iter(
        (0..20).map(|_| Ok::<_, std::io::Error>(bytes::Bytes::from(vec![b' '; 64 * 1024]))),
    );
    let r = s
        .http
        .post(s.url("/v1/sessions"))
        .bearer_auth(&s.token)
        .header("Content-Type", "application/json")
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    // Unknown route, wrong method (with Allow), unknown session.
    let r = s.get("/v1/nothing").send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["cache-control"], "no-store");
    assert_eq!(code(r.json().await.unwrap()), "not_found");
    let r = s
        .http
        .put(s.url("/v1/sessions"))
        .bearer_auth(&s.token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    assert!(r.headers().contains_key("allow"));
    assert_eq!(code(r.json().await.unwrap()), "method_not_allowed");
    let r = s.get("/v1/sessions/nope").send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(code(r.json().await.unwrap()), "session_not_found");
    // A bad query or path parameter: the same error shape.
    for path in [
        "/v1/sessions?limit=many",
        "/v1/sessions?bogus=1",
        "/v1/sessions/x/turns/first/diff",
    ] {
        let r = s.get(path).send().await.unwrap();
        assert_eq!(r.status(), 400, "{path}");
        assert_eq!(code(r.json().await.unwrap()), "invalid_request", "{path}");
    }
    // Headers past 16 KiB.
    let r = s
        .get("/v1/pending")
        .header("X-Big", "a".repeat(20 * 1024))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 431);
    // A folder that is not one.
    let r = s
        .post("/v1/sessions", json!({"workspace": "/no/such/folder"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert_eq!(code(r.json().await.unwrap()), "invalid_workspace");
}

#[tokio::test]
async fn a_unix_socket_is_private_and_speaks_the_same_api() {
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mock = cairn_testkit::MockLlmServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let sock = dir.path().join("run").join("serve.sock");
    let mut cfg = super::harness::config(&mock, dir.path(), state.path());
    cfg.listen = Some(format!("unix:{}", sock.display()));
    let running = cairn_serve::start(cfg).await.unwrap();
    assert_eq!(running.listen, format!("unix:{}", sock.display()));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&sock), 0o600);
    assert_eq!(mode(sock.parent().unwrap()), 0o700);
    let line: Value = serde_json::from_str(&running.start_line()).unwrap();
    assert_eq!(line["listen"], format!("unix:{}", sock.display()));
    assert_eq!(line["pid"], std::process::id());
    let ask = |auth: Option<String>| {
        let sock = sock.clone();
        async move {
            let mut c = tokio::net::UnixStream::connect(&sock).await.unwrap();
            let auth = auth
                .map(|t| format!("Authorization: Bearer {t}\r\n"))
                .unwrap_or_default();
            let req =
                format!("GET /v1/pending HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n");
            c.write_all(req.as_bytes()).await.unwrap();
            let mut out = String::new();
            c.read_to_string(&mut out).await.unwrap();
            out
        }
    };
    // The token is needed on the socket too; no Host check there.
    assert!(ask(None).await.starts_with("HTTP/1.1 401"));
    let ok = ask(Some(running.token.clone())).await;
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    // A live socket cannot be taken over.
    let mut again = super::harness::config(&mock, dir.path(), state.path());
    again.listen = Some(format!("unix:{}", sock.display()));
    assert!(matches!(
        cairn_serve::start(again).await,
        Err(cairn_serve::ServeError::Usage(_))
    ));
    running.shutdown().await;
    assert!(!sock.exists(), "the socket is removed at shutdown");
}

/// A change to a test server's options.
type Tweak = Box<dyn Fn(&mut cairn_serve::ServeConfig)>;

#[tokio::test]
async fn bad_options_are_usage_errors() {
    let mock = cairn_testkit::MockLlmServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let cases: Vec<Tweak> = vec![
        Box::new(|c| c.listen = Some("0.0.0.0:0".into())),
        Box::new(|c| c.approve = cairn_serve::ApprovePolicy::Allow),
        Box::new(|c| c.approval_timeout = std::time::Duration::ZERO),
        Box::new(|c| c.allow_origins = vec!["app.example".into()]),
        Box::new(|c| c.tenants = Some("/t.json".into())),
    ];
    for (i, tweak) in cases.iter().enumerate() {
        let mut cfg = super::harness::config(&mock, dir.path(), state.path());
        tweak(&mut cfg);
        match cairn_serve::start(cfg).await {
            Err(e) => assert_eq!(e.exit_code(), 2, "case {i}: {e}"),
            Ok(_) => panic!("case {i} started"),
        }
    }
    // A folder open to others is refused for the socket.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cfg = super::harness::config(&mock, dir.path(), state.path());
    cfg.listen = Some(format!("unix:{}", open.join("s.sock").display()));
    assert!(matches!(
        cairn_serve::start(cfg).await,
        Err(cairn_serve::ServeError::Usage(_))
    ));
}
