//! An MCP server's form during `cairn run --approve ask`, answered on a real terminal: the
//! user fills in one field and presses Enter at the others, and the server receives that
//! value plus the schema's defaults (the reference server-everything, over stdio).

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

/// A user's home with server-everything configured as `every`; the home and the config.
struct Home {
    home: tempfile::TempDir,
    mcp: std::path::PathBuf,
}

impl Home {
    /// `None` (and why, printed) when the server is not installed.
    fn new() -> Option<Home> {
        let entry = match common::everything::entry() {
            Ok(e) => e,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return None;
            }
        };
        let home = tempfile::tempdir().unwrap();
        let mcp = common::everything::config_in(home.path(), &entry);
        Some(Home { home, mcp })
    }
}

/// `cairn run --approve ask "prompt"` on a terminal with the server configured (all its tools
/// offered directly); `answer` types at the prompts as they appear; (exit code, screen).
async fn on_terminal(
    home: &Home,
    server: &MockLlmServer,
    prompt: &str,
    answer: impl FnOnce(&common::tty::TtyRun, &mut dyn FnMut(&str)) + Send + 'static,
) -> (u32, String) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let (url, prompt) = (server.base_url(), prompt.to_string());
    let (home_p, mcp) = (home.home.path().to_path_buf(), home.mcp.clone());
    tokio::task::spawn_blocking(move || {
        let config = home_p.join(".config");
        let mut run = common::tty::start_with_env(
            ws.path(),
            state.path(),
            &url,
            &prompt,
            &[],
            &[
                ("HOME", &home_p),
                ("XDG_CONFIG_HOME", &config),
                ("CAIRN_MCP_CONFIG", &mcp),
                ("CAIRN_MCP_LAZY", Path::new("off")),
            ],
        );
        let mut writer = run.master.take_writer().unwrap();
        let mut type_line = |text: &str| {
            writer.write_all(format!("{text}\n").as_bytes()).unwrap();
            writer.flush().unwrap();
        };
        answer(&run, &mut type_line);
        let code = run.wait_exit();
        (code, run.text())
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_form_is_answered_on_the_terminal_and_reaches_it_with_the_defaults() {
    let Some(home) = Home::new() else { return };
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "mcp__every__trigger-elicitation-request", json!({})),
        Reply::text("Thanks, all done."),
    ])
    .await
    .unwrap();
    let (code, shown) = on_terminal(&home, &server, "fill in the form", |run, type_line| {
        // The tool call itself is approved first, then the form is offered.
        run.wait_for("wants to run");
        type_line("y");
        run.wait_for("Fill in this form?");
        type_line("y");
        // Each field's prompt ends in ") > "; only `name` gets a value, Enter elsewhere.
        let mut answered = 0;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = run.text();
            if text.contains("Thanks, all done.") {
                break;
            }
            let prompts = text.matches(") > ").count();
            if prompts > answered {
                let last = text.rsplit('\n').next().unwrap_or("").to_string();
                answered = prompts;
                type_line(if last.trim_start().starts_with("name (") {
                    "Ada Lovelace"
                } else {
                    ""
                });
            }
            assert!(Instant::now() < deadline, "stuck; terminal showed: {text}");
            std::thread::sleep(Duration::from_millis(20));
        }
    })
    .await;
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("MCP server `every` asks"), "{shown}");
    assert!(shown.contains("(required)"), "{shown}");
    // What the server answered (the tool's result) went back to the model.
    let sent = server.requests()[1].body["messages"].to_string();
    for part in [
        "Ada Lovelace",
        "It was a dark and stormy night.",
        "Favorite Integer: 42",
        "\\\"action\\\": \\\"accept\\\"",
    ] {
        assert!(sent.contains(part), "{part} missing from {sent}");
    }
}

/// `cairn run [--json] --approve allow` with the server configured (no terminal: nobody can
/// answer a form); the run's exit code, stdout and stderr.
async fn run_json(
    home: &Home,
    prompt: &str,
    server: &MockLlmServer,
    json: bool,
) -> (i32, String, String) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--model", "m", "--approve", "allow", "--vcs", "off"])
        .args(if json { &["--json"][..] } else { &[][..] })
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(state.path())
        .arg("--base-url")
        .arg(server.base_url())
        .arg(prompt)
        .env("HOME", home.home.path())
        .env("XDG_CONFIG_HOME", home.home.path().join(".config"))
        .env("CAIRN_MCP_CONFIG", &home.mcp)
        .env("CAIRN_MCP_LAZY", "off")
        .env("OPENAI_API_KEY", "k")
        .env("CAIRN_SANDBOX", "off")
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_at_server_uri_mention_is_read_through_that_server_and_others_stay_paths() {
    let Some(home) = Home::new() else { return };
    let server = MockLlmServer::with_script(vec![Reply::text("Read it.")])
        .await
        .unwrap();
    let (code, _out, err) = run_json(
        &home,
        "summarise @every:demo://resource/static/document/architecture.md and @nosuch:notes.md",
        &server,
        true,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let sent = server.requests()[0].body["messages"].to_string();
    // The resource's text, labelled by server and URI, reached the model.
    assert!(
        sent.contains("every:demo://resource/static/document/architecture.md"),
        "{sent}"
    );
    assert!(sent.contains("Architecture"), "{sent}");
    // `nosuch` is no server: the `@path` rules apply (no such file: sent as plain text).
    assert!(err.contains("@nosuch:notes.md"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_form_in_a_run_that_cannot_ask_is_declined_and_said() {
    let Some(home) = Home::new() else { return };
    // `--approve allow` answers the call's approval; a form still has nobody to answer it.
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "mcp__every__trigger-elicitation-request", json!({})),
        Reply::text("Understood."),
    ])
    .await
    .unwrap();
    let (code, _out, err) = run_json(&home, "fill in the form", &server, false).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("MCP server `every` asked for information")
            && err.contains("declined: this run cannot ask"),
        "{err}"
    );
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains("decline"), "{sent}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_servers_sampling_request_is_allowed_on_the_terminal_and_the_model_answers_it() {
    let Some(home) = Home::new() else { return };
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "mcp__every__trigger-sampling-request",
            json!({"prompt": "name a colour", "maxTokens": 20}),
        ),
        // The server's request, answered by the session's model.
        Reply::text("Vermilion."),
        Reply::text("The server heard back."),
    ])
    .await
    .unwrap();
    let (code, shown) = on_terminal(
        &home,
        &server,
        "ask the server to sample",
        |run, type_line| {
            run.wait_for("wants to run");
            type_line("y");
            run.wait_for("asks your model");
            run.wait_for("[n] deny > ");
            type_line("y");
        },
    )
    .await;
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("name a colour"),
        "the request is shown: {shown}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{shown}");
    let sampled = requests[1].body["messages"].to_string();
    assert!(
        sampled.contains("You are a helpful test server."),
        "{sampled}"
    );
    assert!(sampled.contains("name a colour"), "{sampled}");
    let after = requests[2].body["messages"].to_string();
    assert!(after.contains("Vermilion."), "{after}");
}
