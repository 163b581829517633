//! A session's spending cap (issue 44): on a mock priced with `CAIRN_PRICE_PER_MTOK`, a run
//! warns once at 80 % of `--budget-usd`, and stops with `budget_exceeded` (exit 1) before a
//! request that would go past it; a token cap works the same on an unpriced model.

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

async fn run(server: &MockLlmServer, flags: &[&str], price: Option<&str>) -> (i32, Vec<Value>) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args([
        "run",
        "--json",
        "--model",
        "m",
        "--approve",
        "allow",
        "--vcs",
        "off",
    ])
    .args(flags)
    .arg("--workspace")
    .arg(ws.path())
    .arg("--state-dir")
    .arg(state.path())
    .arg("--base-url")
    .arg(server.base_url())
    .arg("list the files, twice")
    .env("OPENAI_API_KEY", "k")
    .env("CAIRN_SANDBOX", "off")
    .env("XDG_CONFIG_HOME", state.path().join("config"))
    .env_remove("CAIRN_BUDGET_USD")
    .env_remove("CAIRN_BUDGET_TOKENS");
    match price {
        Some(p) => c.env("CAIRN_PRICE_PER_MTOK", p),
        None => c.env_remove("CAIRN_PRICE_PER_MTOK"),
    };
    let out = c.output().await.unwrap();
    let events = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out.status.code().unwrap_or(-1), events)
}

fn script() -> Vec<Reply> {
    (0..4)
        .map(|i| {
            Reply::tool_call(&format!("c{i}"), "list_files", json!({"path": "."}))
                .with_usage(10_000, 1_000)
        })
        .collect()
}

fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

/// The issue's own figure: a $0.01 cap on a priced mock stops after the first request.
#[tokio::test(flavor = "multi_thread")]
async fn a_one_cent_cap_stops_with_budget_exceeded() {
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (code, events) = run(&server, &["--budget-usd", "0.01"], Some("1,1")).await;
    assert_eq!(code, 1, "{events:?}");
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:?}");
    assert_eq!(errors[0]["data"]["error_type"], "budget_exceeded");
    assert_eq!(server.requests().len(), 1, "no request past the cap");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dollar_cap_warns_at_80_percent_and_stops_the_turn_at_100() {
    let server = MockLlmServer::with_script(script()).await.unwrap();
    // $1 per million tokens in and out: each request costs $0.011.
    let (code, events) = run(&server, &["--budget-usd", "0.025"], Some("1,1")).await;
    assert_eq!(code, 1, "{events:?}");
    let warnings = of_type(&events, "budget_warning");
    assert_eq!(warnings.len(), 1, "{events:?}");
    assert_eq!(warnings[0]["data"]["unit"], "usd");
    let errors = of_type(&events, "error");
    assert_eq!(errors.len(), 1, "{events:?}");
    assert_eq!(errors[0]["data"]["error_type"], "budget_exceeded");
    assert!(errors[0]["data"]["error"]
        .as_str()
        .unwrap()
        .contains("Raise the cap"));
    // $0.022 after two requests ≥ 80 %; $0.033 after three ≥ 100 %: no fourth request.
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_cap_stops_an_unpriced_model_and_a_dollar_cap_there_is_said_unenforced() {
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (code, events) = run(&server, &["--budget-tokens", "15000"], None).await;
    assert_eq!(code, 1, "{events:?}");
    assert_eq!(
        of_type(&events, "error")[0]["data"]["error_type"],
        "budget_exceeded"
    );
    assert_eq!(server.requests().len(), 2);

    // A dollar cap on a model without a price: said once, not enforced (tokens are the
    // cap to use there), and the turn runs to its end.
    let mut replies = script();
    replies.truncate(2);
    replies.push(Reply::text("done").with_usage(10, 1));
    let server = MockLlmServer::with_script(replies).await.unwrap();
    let (code, events) = run(&server, &["--budget-usd", "0.001"], None).await;
    assert_eq!(code, 0, "{events:?}");
    let warnings = of_type(&events, "budget_warning");
    assert_eq!(warnings.len(), 1, "{events:?}");
    assert!(
        warnings[0]["data"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be enforced"),
        "{warnings:?}"
    );
    assert_eq!(server.requests().len(), 3);
}
