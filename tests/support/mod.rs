//! Helpers of the end-to-end tests: start the real app under tauri-driver (WebKitWebDriver),
//! drive the page, answer native dialogs with xdotool, take screenshots.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};

/// Longest wait for anything in the page.
pub const WAIT: Duration = Duration::from_secs(30);

/// Longest run of one scenario against one app.
const SCENARIO_LIMIT: Duration = Duration::from_secs(240);

/// Where the tests write their screenshots (shown in the README).
pub fn screenshot_path(name: &str) -> PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
        .join("docs/screenshots")
        .join(name)
}

fn required() -> bool {
    std::env::var("CAIRN_E2E").as_deref() == Ok("1")
}

/// Skips the test with a message, or fails it when CI requires E2E (`CAIRN_E2E=1`).
pub fn skip_or_fail(reason: &str) {
    if required() {
        panic!("E2E required (CAIRN_E2E=1) but {reason}");
    }
    say_skipped(&format!(
        "{reason} (set CAIRN_E2E=1 to make this a failure)"
    ));
}

/// Says that a check was skipped and why, where the test run's output shows it even when the
/// test passes (libtest captures `eprintln!` of passing tests: this writes to the stderr handle).
pub fn say_skipped(reason: &str) {
    let message = format!("SKIPPED e2e: {reason}\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), message.as_bytes());
}

/// Finds an executable on PATH, then in cargo's bin dir.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    if let Some(home) = std::env::var_os("CARGO_HOME") {
        dirs.push(PathBuf::from(home).join("bin"));
    }
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".cargo/bin"));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

fn free_port() -> u16 {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    listener.local_addr().unwrap().port()
}

/// A running tauri-driver, stopped with SIGTERM (its handler also stops WebKitWebDriver and
/// the app; SIGKILL would leave both running).
struct Driver {
    child: Child,
}

impl Driver {
    fn start(driver: &Path, native: &Path, port: u16, env: &[(String, String)]) -> Driver {
        let child = Command::new(driver)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .args(["--port", &port.to_string()])
            .args(["--native-port", &free_port().to_string()])
            .arg("--native-driver")
            .arg(native)
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver.display()));
        let driver = Driver { child };
        let deadline = Instant::now() + WAIT;
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "tauri-driver did not listen on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        driver
    }

    fn stop(mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("tauri-driver ignored SIGTERM; killing it");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The app binary driven: `CAIRN_E2E_APP` (the release build, for the memory benchmark), else
/// the one cargo built for these tests.
pub fn app_binary() -> PathBuf {
    std::env::var_os("CAIRN_E2E_APP")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cairn-app")))
}

async fn connect(port: u16) -> Client {
    let app = app_binary();
    let app = app.canonicalize().unwrap_or(app);
    let mut caps = serde_json::Map::new();
    caps.insert("browserName".into(), "wry".into());
    caps.insert(
        "tauri:options".into(),
        serde_json::json!({ "application": app.to_string_lossy() }),
    );
    // A loaded machine sometimes fails the first session (WebKitWebDriver not ready yet):
    // try again a few times before calling it a failure.
    let mut attempt = 1;
    loop {
        match ClientBuilder::native()
            .capabilities(caps.clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
        {
            Ok(client) => return client,
            Err(e) if attempt < 3 => {
                eprintln!("WebDriver session attempt {attempt} failed: {e}; retrying");
                attempt += 1;
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
            Err(e) => panic!("no WebDriver session with the app after {attempt} attempts: {e}"),
        }
    }
}

/// tauri-driver and WebKitWebDriver, or `None` (after a skip message) when E2E cannot run here.
pub fn drivers() -> Option<(PathBuf, PathBuf)> {
    if std::env::var("CAIRN_E2E").as_deref() == Ok("0") {
        let message = "SKIPPED e2e: disabled with CAIRN_E2E=0\n";
        let _ = std::io::Write::write_all(&mut std::io::stderr(), message.as_bytes());
        return None;
    }
    if !cfg!(feature = "custom-protocol") {
        skip_or_fail(
            "the app was built without `--features custom-protocol` (it would load the Vite dev server)",
        );
        return None;
    }
    let Some(driver) = find_program("tauri-driver") else {
        skip_or_fail(
            "`tauri-driver` is not installed (`cargo install tauri-driver --locked --version 2.1.0`)",
        );
        return None;
    };
    let Some(native) = find_program("WebKitWebDriver") else {
        skip_or_fail("`WebKitWebDriver` is not installed (Debian package webkit2gtk-driver)");
        return None;
    };
    if std::env::var_os("DISPLAY").is_none() {
        skip_or_fail(
            "there is no X display (run under `xvfb-run -a -s \"-screen 0 1280x800x24\" dbus-run-session --`)",
        );
        return None;
    }
    Some((driver, native))
}

/// One app at a time: a window hidden behind another one on the same X display stops
/// painting, and native dialogs and screenshots would mix.
static ONE_APP_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Starts the app under tauri-driver with `env`, runs `scenario` against it, and always closes
/// the session and stops the driver before re-raising a failure. Returns false when E2E
/// cannot run here (skipped).
pub async fn with_app<F, Fut>(env: Vec<(String, String)>, scenario: F) -> bool
where
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    with_app_for(env, SCENARIO_LIMIT, scenario).await
}

/// [`with_app`] with a longer limit for the scenario (the memory benchmark's long session).
pub async fn with_app_for<F, Fut>(env: Vec<(String, String)>, limit: Duration, scenario: F) -> bool
where
    F: FnOnce(Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let Some((driver, native)) = drivers() else {
        return false;
    };
    let _turn = ONE_APP_AT_A_TIME.lock().await;
    let port = free_port();
    let driver = Driver::start(&driver, &native, port, &env);
    // Run the session in a task so a failed assertion still reaches the cleanup below; a
    // scenario that hangs (a WebDriver call that never returns) fails after SCENARIO_LIMIT.
    let outcome = tokio::spawn(async move {
        let client = connect(port).await;
        let run = tokio::spawn(scenario(client.clone()));
        let abort = run.abort_handle();
        let result = match tokio::time::timeout(limit, run).await {
            Ok(r) => r,
            Err(_) => {
                abort.abort();
                let _ = tokio::time::timeout(Duration::from_secs(10), client.clone().close()).await;
                panic!("the E2E scenario did not finish within {limit:?}");
            }
        };
        match tokio::time::timeout(Duration::from_secs(20), client.close()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("closing the WebDriver session failed: {e}"),
            Err(_) => eprintln!("closing the WebDriver session timed out"),
        }
        result
    })
    .await;
    driver.stop();
    match outcome {
        Ok(Ok(())) => true,
        Ok(Err(failed)) | Err(failed) if failed.is_panic() => {
            std::panic::resume_unwind(failed.into_panic())
        }
        Ok(Err(failed)) | Err(failed) => panic!("the E2E session did not finish: {failed}"),
    }
}

/// Waits for an element and returns it.
pub async fn find(client: &Client, css: &str) -> fantoccini::elements::Element {
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no `{css}` in the page: {e}"))
}

/// Text of the first element matching `css` (waits for it).
pub async fn text_of(client: &Client, css: &str) -> String {
    find(client, css).await.text().await.unwrap()
}

/// Text of the last element matching `css` (waits for one).
pub async fn last_text(client: &Client, css: &str) -> String {
    find(client, css).await;
    let js = format!(
        "const all = document.querySelectorAll({}); return all[all.length - 1].textContent",
        serde_json::to_string(css).unwrap()
    );
    client
        .execute(&js, vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Clicks the first element matching `css` (waits for it).
pub async fn click(client: &Client, css: &str) {
    find(client, css)
        .await
        .click()
        .await
        .unwrap_or_else(|e| panic!("cannot click `{css}`: {e}"));
}

/// Runs `js` (a function body returning a value) until it returns `true`.
pub async fn wait_js(client: &Client, what: &str, js: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        let v = client.execute(js, vec![]).await.unwrap();
        if v == serde_json::Value::Bool(true) {
            return;
        }
        if Instant::now() >= deadline {
            panic!(
                "timed out waiting for {what} (`{js}`); the page ends with:\n{}",
                page_tail(client).await
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The last lines of the page's visible text, for a timeout's message.
async fn page_tail(client: &Client) -> String {
    let text = client
        .execute(
            "return document.body ? document.body.innerText : ''",
            vec![],
        )
        .await
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}

/// Waits until an element matching `css` exists.
pub async fn wait_css(client: &Client, css: &str) {
    let js = format!(
        "return document.querySelector({}) !== null",
        serde_json::to_string(css).unwrap()
    );
    wait_js(client, css, &js).await;
}

/// Waits until the clipboard (read through Cairn's own command) holds `needle`; returns it.
pub async fn wait_clipboard(client: &Client, needle: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let copied = client
            .execute(
                "return window.__TAURI_INTERNALS__.invoke('clipboard_read')",
                vec![],
            )
            .await
            .unwrap();
        let copied = copied.as_str().unwrap_or_default().to_string();
        if copied.contains(needle) {
            return copied;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the clipboard never held {needle:?}: {copied:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Number of elements matching `css`.
pub async fn count(client: &Client, css: &str) -> usize {
    client.find_all(Locator::Css(css)).await.unwrap().len()
}

/// Types into the composer and presses Enter.
pub async fn send(client: &Client, text: &str) {
    let composer = find(client, "[data-testid=composer]").await;
    composer.send_keys(text).await.unwrap();
    composer.send_keys(&Key::Enter.to_string()).await.unwrap();
}

/// Waits until `n` turns of the transcript ended with `status` (counted from its
/// `data-turn-ends`: the transcript is virtualised, so rows out of view are not in the DOM).
pub async fn wait_turns(client: &Client, status: &str, n: usize) {
    let js = format!(
        "const t = document.querySelector('[data-testid=transcript]'); \
         return t !== null && (t.dataset.turnEnds || '').split(' ').filter(s => s === '{status}').length >= {n}"
    );
    wait_js(client, &format!("{n} turn(s) ending {status}"), &js).await;
}

/// How every turn of the transcript ended, in order (its `data-turn-ends`).
pub async fn turn_ends(client: &Client) -> Vec<String> {
    let js = "const t = document.querySelector('[data-testid=transcript]'); \
              return t === null ? '' : (t.dataset.turnEnds || '')";
    let v = client.execute(js, vec![]).await.unwrap();
    v.as_str()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Saves a screenshot of the app window (after a pause, so the last change is painted).
///
/// Taken from the X server (`import -window <id>`): WebKitGTK's own snapshot, which the
/// WebDriver screenshot uses, never returns for some pages (a fixed-position overlay) when
/// accelerated compositing is off, as the app turns it off without a GPU.
pub async fn screenshot(client: &Client, name: &str) {
    tokio::time::sleep(Duration::from_millis(400)).await;
    let path = screenshot_path(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // The window is titled "<workspace> — Cairn" (or "Cairn" without a workspace).
    let window = xdotool(&["search", "--onlyvisible", "--name", "Cairn$"])
        .and_then(|ids| ids.lines().last().map(str::to_string));
    if let Some(id) = window {
        let ok = Command::new("import")
            .args(["-window", &id])
            .arg(&path)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            eprintln!("screenshot: {}", path.display());
            return;
        }
    }
    let png = client.screenshot().await.unwrap();
    std::fs::write(&path, png).unwrap();
    eprintln!("screenshot: {}", path.display());
}

/// Saves a screenshot of the whole X screen (native dialogs included), with ImageMagick.
pub fn screen_shot(name: &str) -> bool {
    let path = screenshot_path(name);
    let ok = Command::new("import")
        .args(["-window", "root"])
        .arg(&path)
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        eprintln!("screenshot: {}", path.display());
    }
    ok
}

/// Runs xdotool; its stdout, or `None` when it failed.
pub fn xdotool(args: &[&str]) -> Option<String> {
    let out = Command::new("xdotool").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Waits for a top-level X window whose name matches `pattern`; its id.
pub async fn wait_window(pattern: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(ids) = xdotool(&["search", "--onlyvisible", "--name", pattern]) {
            if let Some(id) = ids.lines().last() {
                return id.to_string();
            }
        }
        assert!(
            Instant::now() < deadline,
            "no visible window named like `{pattern}`"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Whether a visible window named like `pattern` exists.
pub fn window_visible(pattern: &str) -> bool {
    xdotool(&["search", "--onlyvisible", "--name", pattern])
        .is_some_and(|ids| !ids.trim().is_empty())
}

/// A temporary folder holding a workspace with a readable name (`<tmp>/<name>`).
pub fn named_workspace(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("cairn-e2e-")
        .tempdir()
        .unwrap();
    let ws = dir.path().join(name);
    std::fs::create_dir(&ws).unwrap();
    let ws = ws.canonicalize().unwrap();
    (dir, ws)
}

/// An RFC 3339 time `minutes` ago.
pub fn minutes_ago(minutes: i64) -> String {
    (chrono::Utc::now() - chrono::Duration::minutes(minutes)).to_rfc3339()
}

/// Writes the settings file so that `workspace` is the most recent workspace.
pub fn seed_recent(state_dir: &Path, workspace: &Path, extra: serde_json::Value) {
    let mut settings = serde_json::json!({
        "recent": [{"path": workspace.canonicalize().unwrap(), "openedAt": minutes_ago(3)}]
    });
    if let (Some(s), Some(e)) = (settings.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    std::fs::create_dir_all(state_dir).unwrap();
    std::fs::write(
        state_dir.join("desktop.json"),
        serde_json::to_vec_pretty(&settings).unwrap(),
    )
    .unwrap();
}

/// The pid of the `cairn-app` process whose environment names `state_dir`.
pub fn app_pid(state_dir: &Path) -> Option<u32> {
    let needle = format!("CAIRN_STATE_DIR={}", state_dir.display());
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(entry.path().join("comm")).ok()?;
            if !comm.trim().starts_with("cairn-app") {
                return None;
            }
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            environ
                .split(|b| *b == 0)
                .any(|var| var == needle.as_bytes())
                .then_some(pid)
        })
}

/// Opens the most recent workspace from the welcome screen; after a restart the window has
/// reopened it by itself, and then there is nothing to click.
pub async fn open_recent(client: &Client) {
    wait_js(
        client,
        "the welcome screen or the reopened workspace",
        "return document.querySelector('[data-testid=recent-workspace]') !== null \
             || document.querySelector('[data-testid=composer]') !== null",
    )
    .await;
    if count(client, "[data-testid=composer]").await == 0 {
        click(client, "[data-testid=recent-workspace]").await;
    }
    find(client, "[data-testid=composer]").await;
}

/// Starts a new chat in the window and waits for its empty transcript.
pub async fn new_chat(client: &Client) {
    click(client, "[data-testid=new-chat]").await;
    wait_js(
        client,
        "an empty transcript for the new session",
        "return document.querySelectorAll('[data-testid=user-message]').length === 0",
    )
    .await;
}

/// Geometry `(x, y, width, height)` of an X window.
pub fn geometry(id: &str) -> (i64, i64, i64, i64) {
    let out = xdotool(&["getwindowgeometry", "--shell", id]).unwrap_or_default();
    let get = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(0)
    };
    (get("X"), get("Y"), get("WIDTH"), get("HEIGHT"))
}

/// The id of the session the window shows (its board row is the current one).
pub async fn shown_id(c: &Client) -> String {
    wait_js(
        c,
        "a shown session on the board",
        "return document.querySelector('[data-testid=session-item][aria-current=true]') !== null",
    )
    .await;
    c.execute(
        "return document.querySelector('[data-testid=session-item][aria-current=true]').dataset.sessionId",
        vec![],
    )
    .await
    .unwrap()
    .as_str()
    .unwrap()
    .to_string()
}
