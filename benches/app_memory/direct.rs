//! The app started as a user starts it: no WebDriver, its last workspace reopened from the
//! state dir. WebDriver's automation session has its own share of the web process, so the
//! idle figure is read here; the runs the bench drives are compared with their own idle.
//!
//! The app is started twice, each time with a fresh state dir. The first start finds the page
//! cache as the machine left it and tells which files the app maps; those are then dropped
//! from the cache (`cairn_runtime::bench::drop_from_page_cache`), and the second start is the
//! figure judged, reproducible from run to run. Both are printed.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use cairn_runtime::bench::{mapped_files, process_tree, TreeMemory};

use crate::support::{app_binary, named_workspace, wait_window};
use crate::{env_for, measure};
use cairn_testkit::MockLlmServer;

/// The workspace folder's name, which the window's title shows once the page opened it.
const WORKSPACE: &str = "bench-direct";

/// Figures of the direct starts.
#[derive(Default)]
pub struct DirectRun {
    /// Idle with the page cache as found.
    pub found: TreeMemory,
    /// Idle after the app's files were dropped from the page cache.
    pub idle: TreeMemory,
    /// The files the app's processes map.
    pub files: BTreeSet<PathBuf>,
}

/// Starts the app twice as described in the module doc; its figures.
pub async fn direct_run(settle: Duration) -> DirectRun {
    let server = MockLlmServer::with_script(Vec::new()).await.unwrap();
    let (_ws_dir, ws) = named_workspace(WORKSPACE);
    let (found, files) = start_and_measure(&server, &ws, settle).await;
    let dropped = cairn_runtime::bench::drop_from_page_cache(&files);
    assert!(
        dropped > 0,
        "no mapped file could be dropped from the page cache"
    );
    let (idle, _) = start_and_measure(&server, &ws, settle).await;
    DirectRun { found, idle, files }
}

/// One start with a fresh state dir that reopens `ws`: its idle memory and mapped files.
async fn start_and_measure(
    server: &MockLlmServer,
    ws: &Path,
    settle: Duration,
) -> (TreeMemory, BTreeSet<PathBuf>) {
    let state = tempfile::tempdir().unwrap();
    crate::support::seed_recent(
        state.path(),
        ws,
        serde_json::json!({ "mainWorkspace": ws.canonicalize().unwrap() }),
    );
    let mut child = tokio::process::Command::new(app_binary())
        .envs(env_for(state.path(), server))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", app_binary().display()));
    let pid = child.id().expect("the app is running");
    // Titled after the workspace by the page's first call: the workspace is open in it.
    wait_window(&format!("^{WORKSPACE} .* Cairn$")).await;
    let memory = measure(pid, settle).await;
    let files = mapped_files(pid);
    assert!(
        memory.processes >= 2,
        "the app and its web process were measured: {memory:?}"
    );
    stop(&mut child, process_tree(pid)).await;
    (memory, files)
}

/// Ends the app (its state dir is thrown away) and waits until its processes are gone: the
/// WebKit processes end when the app's end closes their connection.
async fn stop(child: &mut tokio::process::Child, tree: HashSet<u32>) {
    let _ = child.kill().await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while tree.iter().any(|pid| alive(*pid)) {
        assert!(
            Instant::now() < deadline,
            "the app's processes {tree:?} outlived it"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether `pid` still runs (a zombie waiting for its reaper does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}
