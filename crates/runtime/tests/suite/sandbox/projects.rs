//! Real projects still build and test inside the default sandbox: a cargo workspace with a
//! path dependency, an npm project with a `file:` dependency (`npm ci`, `npm test`) and a
//! Python project (pytest when installed, else unittest), all offline, with package caches
//! private to the sandbox (under the state dir), never the user's own.

use std::path::Path;
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineConfig, Session, ShellPolicy, ToolRegistry};
use cairn_policy::sandbox::{bwrap_works, SandboxMode};
use cairn_protocol::{Message, Mode};
use cairn_runtime::sandbox::{cache_root, exec_environment_with, SandboxOptions};
use serde_json::json;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn projects(ws: &Path) {
    write(
        ws,
        "rs/app/Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\ndep = { path = \"../dep\" }\n",
    );
    write(
        ws,
        "rs/app/src/main.rs",
        "fn main() { println!(\"sum={}\", dep::add(2, 3)); }\n",
    );
    write(
        ws,
        "rs/dep/Cargo.toml",
        "[package]\nname = \"dep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(
        ws,
        "rs/dep/src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\
         #[cfg(test)]\nmod tests { #[test] fn adds() { assert_eq!(super::add(2, 2), 4); } }\n",
    );
    write(
        ws,
        "js/package.json",
        r#"{"name": "app", "version": "1.0.0", "private": true,
            "scripts": {"test": "node test.js"},
            "dependencies": {"helper": "file:./helper"}}"#,
    );
    write(
        ws,
        "js/helper/package.json",
        r#"{"name": "helper", "version": "1.0.0", "main": "index.js"}"#,
    );
    write(
        ws,
        "js/helper/index.js",
        "module.exports = (a, b) => a * b;\n",
    );
    write(
        ws,
        "js/test.js",
        "const m = require('helper'); if (m(6, 7) !== 42) process.exit(1); console.log('npm-ok');\n",
    );
    write(ws, "py/calc.py", "def add(a, b):\n    return a + b\n");
    write(
        ws,
        "py/test_calc.py",
        "import unittest\nimport calc\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n\n\ndef test_add():\n    assert calc.add(1, 1) == 2\n",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cargo_npm_and_python_projects_build_and_test_inside_the_sandbox() {
    if !bwrap_works() {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED sandbox: bubblewrap cannot run here");
        return;
    }
    let ws = tempfile::tempdir_in("/var/tmp").unwrap();
    let ws_path = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir_in("/var/tmp").unwrap();
    projects(&ws_path);
    let opts = SandboxOptions {
        mode: SandboxMode::Required,
        ..Default::default()
    };
    let (exec, _) = exec_environment_with(&ws_path, state.path(), &opts).unwrap();
    // The test environment points cargo at the shared target dir outside the workspace,
    // which the sandbox keeps read-only: the project builds into its own target/.
    let cargo = "cd rs/app && env -u CARGO_TARGET_DIR cargo build --offline -q && \
                 ./target/debug/app && cd ../dep && \
                 env -u CARGO_TARGET_DIR cargo test --offline -q 2>&1 | grep 'test result'";
    let npm = "cd js && npm install --offline --no-audit --no-fund >/dev/null && \
               npm ci --offline --no-audit --no-fund && npm test && npm config get cache";
    // pytest comes with scripts/setup.sh (Debian's python3-pytest, for /usr/bin/python3); on
    // CI it must be the one used.
    let required = std::env::var("CAIRN_SANDBOX_TEST").as_deref() == Ok("1");
    let py = if required {
        "cd py && /usr/bin/python3 -m pytest -q -p no:cacheprovider 2>&1"
    } else {
        "cd py && if python3 -m pytest --version >/dev/null 2>&1; \
         then python3 -m pytest -q -p no:cacheprovider; \
         else echo 'no pytest: unittest'; python3 -m unittest -v 2>&1; fi"
    };
    let commands = [cargo, npm, py];
    let mut replies: Vec<FakeReply> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| {
            FakeReply::tool(
                &format!("p{i}"),
                "run_shell",
                json!({"command": c, "timeout_ms": 600000}),
            )
        })
        .collect();
    replies.push(FakeReply::text("done"));
    let mut cfg = EngineConfig::new(ws_path.clone(), state.path().to_path_buf(), "m");
    cfg.mode = Mode::Interactive;
    let mut reg = ToolRegistry::new();
    reg.register_all(cairn_tools::core_tools());
    let s = Session::builder(cfg, Arc::new(FakeLlm::new(replies)))
        .tools(reg)
        .permission_rules(Default::default(), ShellPolicy::Sandbox, true)
        .exec_environment(exec)
        .build();
    let mut stream = s.run("build and test them");
    while stream.recv().await.is_some() {}
    let results: Vec<String> = s
        .messages()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.content),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    for r in &results {
        assert!(r.contains("[exit code: 0]"), "{r}");
    }
    assert!(results[0].contains("sum=5"), "{}", results[0]);
    assert!(results[0].contains("1 passed"), "{}", results[0]);
    assert!(results[1].contains("npm-ok"), "{}", results[1]);
    if required {
        // Both tests (the unittest class and the plain function) ran under pytest.
        assert!(results[2].contains("2 passed"), "{}", results[2]);
    } else {
        assert!(
            results[2].contains("OK") || results[2].contains("passed"),
            "{}",
            results[2]
        );
    }
    // npm's cache was the workspace's private one.
    let npm_cache = cache_root(state.path(), &ws_path).join("npm");
    let cached: Vec<_> = std::fs::read_dir(&npm_cache).unwrap().flatten().collect();
    assert!(!cached.is_empty(), "nothing in {}", npm_cache.display());
    assert!(ws_path.join("rs/app/target/debug/app").exists());
    assert!(ws_path.join("js/node_modules/helper").exists());
}
