//! Link swaps under load (`fixtures/attacks_link_swap.toml`): a thread exchanges a workspace
//! folder with a link out of the workspace or into a protected folder while the file tools are
//! called through a real session again and again; nothing outside or protected ever changes.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use cairn_protocol::ToolStatus;
use serde::Deserialize;
use serde_json::{json, Value};

use super::common::LinkFlipper;
use super::{diff, fill, fill_value, guarded, path_args, run_case, snapshot, world, Case};

/// The corpus file.
#[derive(Debug, Deserialize)]
struct SwapCorpus {
    #[serde(rename = "case")]
    cases: Vec<SwapCase>,
}

/// One swap attack: a tool call (or a path tried with several tools) repeated under flipping.
#[derive(Debug, Deserialize)]
struct SwapCase {
    id: String,
    #[serde(default = "auto")]
    mode: String,
    /// Where the link swapped in for `d` points (absolute, or relative to the workspace).
    link_to: String,
    /// Calls per tool.
    repeat: usize,
    tool: Option<String>,
    args: Option<Value>,
    #[serde(default)]
    tools: Vec<String>,
    path: Option<String>,
    /// Per-tool overrides of `path`.
    #[serde(default)]
    path_for: BTreeMap<String, String>,
}

fn auto() -> String {
    "auto".into()
}

/// Longest a case may run, whatever its `repeat`.
const CASE_TIME_LIMIT: Duration = Duration::from_secs(60);

fn numbered(v: &Value, n: usize) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("{n}", &n.to_string())),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| (k.clone(), numbered(x, n))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| numbered(x, n)).collect()),
        other => other.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn link_swaps_under_load_never_change_anything_outside_or_protected() {
    let text = std::fs::read_to_string(
        cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/attacks_link_swap.toml"),
    )
    .unwrap();
    let corpus: SwapCorpus = toml::from_str(&text).unwrap();
    let mut failures = Vec::new();
    let mut total = 0usize;
    for case in &corpus.cases {
        let calls: Vec<(String, Value)> = match (&case.tool, &case.args, &case.path) {
            (Some(t), Some(a), None) => vec![(t.clone(), a.clone())],
            (None, None, Some(p)) => case
                .tools
                .iter()
                .map(|t| {
                    let p = case.path_for.get(t).unwrap_or(p);
                    (t.clone(), path_args(t, p))
                })
                .collect(),
            _ => panic!("{}: give `tool` + `args`, or `tools` + `path`", case.id),
        };
        let base: Case = serde_json::from_value(json!({
            "id": case.id, "mode": case.mode, "expect": "runs"
        }))
        .unwrap();
        for (tool, args) in calls {
            let w = world();
            let d = w.ws.join("d");
            let target = {
                let t = Path::new(&fill(&case.link_to, &w)).to_path_buf();
                if t.is_absolute() {
                    t
                } else {
                    w.ws.join(t)
                }
            };
            std::fs::create_dir_all(&d).unwrap();
            for n in 0..case.repeat {
                for dir in [&d, &target] {
                    std::fs::write(dir.join(format!("f{n}.txt")), "top secret\n").unwrap();
                }
            }
            let before = guarded(&snapshot(&w.base), &w);
            let flipper = LinkFlipper::start(&d, &w.ws.join("d_alt"), &target);
            let started = Instant::now();
            let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
            for n in 0..case.repeat {
                if started.elapsed() > CASE_TIME_LIMIT {
                    break;
                }
                let args = numbered(&fill_value(&args, &w), n);
                let o = run_case(&base, &tool, args, &w, None).await;
                let key = match (o.asked, o.status) {
                    (true, _) => "asked".to_string(),
                    (false, Some(ToolStatus::Ok)) => "ran".to_string(),
                    (false, Some(ToolStatus::Error)) => "refused by the tool".to_string(),
                    (false, s) => format!("{s:?}"),
                };
                *outcomes.entry(key).or_default() += 1;
                total += 1;
            }
            let flips = flipper.stop();
            let after = guarded(&snapshot(&w.base), &w);
            let changed = diff(&before, &after);
            let label = format!("{} [{tool}]", case.id);
            eprintln!("{label}: {flips} flips, {outcomes:?}");
            let reached_tool = outcomes.get("ran").copied().unwrap_or(0)
                + outcomes.get("refused by the tool").copied().unwrap_or(0);
            if !changed.is_empty() {
                failures.push(format!("{label}: changed outside/protected: {changed:?}"));
            } else if reached_tool == 0 {
                failures.push(format!("{label}: no call reached the tool: {outcomes:?}"));
            } else if flips < 100 {
                failures.push(format!("{label}: only {flips} flips"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} link-swap attacks failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(total >= 1000, "only {total} link-swap calls ran");
}
