//! E2E: a 2,000-turn session (written as events, no model) is navigated with real X input,
//! one app start for every check: Home shows its first turn, Ctrl+F and a word typed find the
//! one early turn that has it (shown, highlighted), and a click on a timeline entry shows that
//! entry's turn, far from both. Scrolling up from the newest pages older turns in until the
//! live chat holds 300, then a window takes over (the view kept on its rows each time); the
//! window slides down as the user scrolls on, never over 300 turns: the page never holds the
//! whole log. Reading down from the first turn, and from a window into the live chat, puts
//! every turn on screen (none jumped over). PageDown and the wheel move a sensible amount.

use super::approvals::screen_point;
use super::*;

use cairn_runtime::store::{EngineHook, PermissionState, SavedSession, SessionStore};
use cairn_testkit::long_session;

const ID: &str = "long-2000";
const TURNS: u32 = 2000;
/// The turn whose answer holds the rare word, and the word.
const RARE_AT: u32 = 7;
const RARE: &str = "Quokka";
/// The chat turn of the timeline entry clicked.
const CHECKPOINT_AT: u32 = 1200;

/// The window's X title (`<workspace> — Cairn`), as xdotool finds it.
const TITLE: &str = "^longest — Cairn$";

/// The app window's X id.
fn window_id() -> String {
    xdotool(&["search", "--onlyvisible", "--name", TITLE])
        .and_then(|ids| ids.lines().last().map(str::to_string))
        .expect("the app's window")
}

/// Real X key events to the app's window: a chord, or text typed.
fn keys(chord: Option<&str>, text: Option<&str>) {
    let id = window_id();
    xdotool(&["windowfocus", "--sync", &id]).unwrap();
    if let Some(chord) = chord {
        xdotool(&["key", "--clearmodifiers", chord]).unwrap();
    }
    if let Some(text) = text {
        xdotool(&["type", "--delay", "30", text]).unwrap();
    }
}

/// A real mouse click on the element matching `css`.
async fn x_click(c: &Client, css: &str) {
    let (x, y) = screen_point(c, &window_id(), css).await;
    xdotool(&["mousemove", &x.to_string(), &y.to_string()]).unwrap();
    xdotool(&["click", "1"]).unwrap();
}

/// Writes the session's log event by event (as the engine's log hook does) and its saved
/// state, then two checkpoints (turns 7 and 1,200) in the workspace's checkpoint store.
fn seed(state: &Path, ws: &Path) {
    let store = SessionStore::new(state);
    let log = store.event_log(ID).unwrap();
    for e in long_session::events(ID, TURNS, RARE_AT, RARE) {
        log.on_event(&e);
    }
    assert!(log.failure().is_none(), "{:?}", log.failure());
    let at = cairn_runtime::store::now();
    store
        .save(&SavedSession {
            session_id: ID.to_string(),
            name: "Two thousand turns".into(),
            name_source: "user".into(),
            workspace: ws.display().to_string(),
            model: "mock-model".into(),
            provider: "openai".into(),
            messages: Vec::new(),
            permissions: PermissionState::default(),
            turns: TURNS,
            todos: Vec::new(),
            usage: cairn_protocol::TokenUsage::default(),
            cost_usd: 0.0,
            created_at: at.clone(),
            updated_at: at,
            protocol_version: cairn_protocol::PROTOCOL_VERSION,
            turn_marks: Vec::new(),
            worktree: None,
        })
        .unwrap();
    let (mut vcs, _) = cairn_runtime::checkpoints::open_session_vcs(state, ID).unwrap();
    for turn in [RARE_AT, CHECKPOINT_AT] {
        let file = ws.join(format!("notes-{turn}.md"));
        vcs.record_change(ID, turn, &format!("notes of turn {turn}"), "notes", || {
            std::fs::write(&file, format!("turn {turn}\n"))
                .map(|()| vec![format!("notes-{turn}.md")])
        })
        .unwrap()
        .unwrap();
    }
}

/// Whether a user or assistant row in the DOM holds `text`.
fn shown(text: &str) -> String {
    let s = serde_json::to_string(text).unwrap();
    format!(
        "return [...document.querySelectorAll('[data-testid=user-message], [data-testid=assistant-message]')]\
         .some((m) => {{ const r = m.getBoundingClientRect(); \
           const t = document.querySelector('[data-testid=transcript]').getBoundingClientRect(); \
           return m.textContent.includes({s}) && r.bottom > t.top && r.top < t.bottom; }})"
    )
}

/// How many turns the page holds (its live chat or window), from the transcript.
async fn turns_held(c: &Client) -> usize {
    turn_ends(c).await.len()
}

/// Scrolls the transcript down a screen at a time (each step once rows are drawn where it
/// stands, as a reader's eyes would need) until turn `until`'s prompt was on screen; returns
/// the turns whose prompt was on screen on the way, in the order first seen.
async fn read_down_to(c: &Client, until: u32) -> Vec<u32> {
    c.execute(
        r#"
        const until = arguments[0];
        const el = document.querySelector('[data-testid=transcript]');
        const s = { seen: [], done: false };
        window.__readDown = s;
        const have = new Set();
        const tick = () => {
          const t = el.getBoundingClientRect();
          let drawn = false;
          for (const m of el.querySelectorAll('[data-testid=user-message]')) {
            const r = m.getBoundingClientRect();
            if (r.bottom <= t.top || r.top >= t.bottom) continue;
            drawn = true;
            const n = /^Step (\d+):/.exec(m.querySelector('.msg-text')?.textContent ?? '');
            if (n !== null && !have.has(n[1])) { have.add(n[1]); s.seen.push(Number(n[1])); }
          }
          if (have.has(String(until))) { s.done = true; return; }
          if (drawn) el.dispatchEvent(new WheelEvent('wheel', { deltaY: el.clientHeight, bubbles: true }));
          if (drawn) el.scrollTop = el.scrollTop + el.clientHeight * 0.9;
          requestAnimationFrame(tick);
        };
        requestAnimationFrame(tick);
        return true
        "#,
        vec![json!(until)],
    )
    .await
    .unwrap();
    wait_js(
        c,
        &format!("turn {until} read on the way down"),
        "return window.__readDown.done",
    )
    .await;
    let seen = c
        .execute("return window.__readDown.seen", vec![])
        .await
        .unwrap();
    serde_json::from_value(seen).unwrap()
}

/// The turns between the first and the last of `seen` that were never on screen.
fn skipped(seen: &[u32]) -> Vec<u32> {
    let (lo, hi) = (
        seen.iter().min().copied().unwrap_or(0),
        seen.iter().max().copied().unwrap_or(0),
    );
    (lo..=hi).filter(|n| !seen.contains(n)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_thousand_turn_session_goes_home_finds_a_word_and_jumps_from_the_timeline() {
    let started = std::time::Instant::now();
    let server = Arc::new(MockLlmServer::with_script(vec![]).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("longest");
    seed(state.path(), &ws);
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        x_click(&c, &format!("[data-testid=session-item][data-session-id='{ID}'] [data-testid=session-open]")).await;
        wait_js(&c, "the newest turn", &shown(&long_session::prompt(TURNS))).await;
        let top = |c: Client| async move {
            c.execute(
                "return document.querySelector('[data-testid=transcript]').scrollTop",
                vec![],
            )
            .await
            .unwrap()
            .as_f64()
            .unwrap()
        };
        assert!(turns_held(&c).await <= 100, "only the newest page at open");

        // Home (a real key, the focus on the page, not in the composer): the first turn.
        click(&c, "[data-testid=session-title]").await;
        keys(Some("Home"), None);
        wait_js(&c, "the first turn after Home", &shown(&long_session::prompt(1))).await;
        let held = turns_held(&c).await;
        assert!(held <= 300, "a window of turns, not the log: {held}");
        // Read on down from the first turn past two pages the window drops at its far end
        // (at 300 turns): not one turn is jumped over.
        let seen = read_down_to(&c, 520).await;
        assert_eq!(seen.first(), Some(&1), "{seen:?}");
        assert_eq!(skipped(&seen), Vec::<u32>::new(), "turns never on screen reading down from the first");
        let window = c
            .execute("return document.querySelector('[data-testid=transcript]').dataset.window", vec![])
            .await
            .unwrap();
        assert!(turns_held(&c).await <= 300, "the window slid: {window}");

        // Ctrl+F, the rare word typed: its one turn is shown with the word highlighted.
        keys(Some("End"), None);
        wait_js(&c, "the newest turn after End", &shown(&long_session::prompt(TURNS))).await;
        keys(Some("ctrl+f"), None);
        wait_js(
            &c,
            "the focus in the search field",
            "return document.activeElement?.dataset.testid === 'find-input'",
        )
        .await;
        keys(None, Some("quokka"));
        wait_js(
            &c,
            "one match",
            "const n = document.querySelector('[data-testid=find-count]'); return n !== null && n.dataset.hits === '1' && n.dataset.current === '0'",
        )
        .await;
        wait_js(
            &c,
            "the match highlighted in view",
            "const m = document.querySelector('[data-find-current=true] [data-testid=find-mark]'); \
             if (m === null) return false; const r = m.getBoundingClientRect(); \
             const t = document.querySelector('[data-testid=transcript]').getBoundingClientRect(); \
             return m.textContent === 'Quokka' && r.top >= t.top && r.bottom <= t.bottom",
        )
        .await;
        wait_js(&c, "the rare turn's prompt near it", &shown(&long_session::prompt(RARE_AT))).await;
        let count = text_of(&c, "[data-testid=find-count]").await;
        assert!(count.contains("1 of 1") && count.contains("1 match"), "{count}");
        screenshot(&c, "long-session-search.png").await;
        // Escape closes the field and takes the highlight away.
        keys(Some("Escape"), None);
        wait_js(
            &c,
            "the search closed",
            "return document.querySelector('[data-testid=find-bar]') === null && document.querySelector('[data-testid=find-mark]') === null",
        )
        .await;

        // Scrolling up from the newest: the live chat pages older turns in (the view kept on
        // its rows) until it holds 300, then a window of the turns around its top takes over.
        keys(Some("End"), None);
        wait_js(&c, "the newest turn again", &shown(&long_session::prompt(TURNS))).await;
        for (what, done) in [
            ("200 turns held", "t.dataset.window === 'live' && t.dataset.turnEnds.split(' ').length === 200"),
            ("300 turns held", "t.dataset.window === 'live' && t.dataset.turnEnds.split(' ').length === 300"),
            ("a window of turns 1,601-1,800", "t.dataset.window === '1600-1800'"),
        ] {
            c.execute(
                "document.querySelector('[data-testid=transcript]').scrollTop = 0; return true",
                vec![],
            )
            .await
            .unwrap();
            wait_js(
                &c,
                what,
                &format!("const t = document.querySelector('[data-testid=transcript]'); return {done}"),
            )
            .await;
            let kept = top(c.clone()).await;
            assert!(kept > 1000.0, "{what}: the view kept its rows (scrollTop {kept})");
        }
        // Reading down from that window hands back to the live chat (which holds turns
        // 1,701-2,000) on the same rows: no turn between is jumped over.
        let seen = read_down_to(&c, 1850).await;
        assert_eq!(skipped(&seen), Vec::<u32>::new(), "turns never on screen reading down into the live chat");
        wait_js(
            &c,
            "the live chat again",
            "return document.querySelector('[data-testid=transcript]').dataset.window === 'live'",
        )
        .await;

        // The timeline entry of turn 1,200 (in neither the first nor the newest page).
        let entry = format!("[data-testid=timeline-entry][data-session-turn='{CHECKPOINT_AT}']");
        find(&c, &entry).await;
        c.execute(
            &format!("document.querySelector({}).scrollIntoView({{block: 'center'}}); return true", serde_json::to_string(&entry).unwrap()),
            vec![],
        )
        .await
        .unwrap();
        x_click(&c, &entry).await;
        wait_js(&c, "turn 1,200 shown", &shown(&long_session::prompt(CHECKPOINT_AT))).await;
        let window = c
            .execute("return document.querySelector('[data-testid=transcript]').dataset.window", vec![])
            .await
            .unwrap();
        let held = turns_held(&c).await;
        assert!(held <= 300, "a window of turns: {held} ({window})");

        // PageDown (a real key) moves most of a screen.
        let before = top(c.clone()).await;
        keys(Some("Next"), None);
        wait_js(
            &c,
            "PageDown to move most of a screen",
            &format!(
                "const t = document.querySelector('[data-testid=transcript]'); \
                 return t.scrollTop - {before} > t.clientHeight * 0.5"
            ),
        )
        .await;

        // Scrolling on down pages newer turns in below; past the cap the oldest go, so the
        // page holds a window of at most 300 turns wherever the user is.
        let mut last = window.as_str().unwrap_or_default().to_string();
        for _ in 0..4 {
            c.execute(
                "const t = document.querySelector('[data-testid=transcript]'); t.scrollTop = t.scrollHeight; return true",
                vec![],
            )
            .await
            .unwrap();
            wait_js(
                &c,
                "the next newer page",
                &format!(
                    "return document.querySelector('[data-testid=transcript]').dataset.window !== {}",
                    serde_json::to_string(&last).unwrap()
                ),
            )
            .await;
            last = c
                .execute("return document.querySelector('[data-testid=transcript]').dataset.window", vec![])
                .await
                .unwrap()
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
        // The wheel (real X wheel clicks over the transcript) moves a sensible amount too.
        let before = top(c.clone()).await;
        let (x, y) = screen_point(&c, &window_id(), "[data-testid=transcript]").await;
        xdotool(&["mousemove", &x.to_string(), &y.to_string()]).unwrap();
        for _ in 0..10 {
            xdotool(&["click", "4"]).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = top(c.clone()).await;
        eprintln!("10 wheel steps: {:.0} px", before - after);
        assert!(before - after > 400.0, "10 wheel steps moved {} px", before - after);
        let (first, end) = last.split_once('-').expect("a window, not the live chat");
        let (first, end): (usize, usize) = (first.parse().unwrap(), end.parse().unwrap());
        assert!(end >= 1549 && end - first <= 300, "window {first}-{end}");
        assert!(turns_held(&c).await <= 300);
    })
    .await;
    if ran {
        eprintln!("long session E2E: {:.1} s", started.elapsed().as_secs_f64());
    }
}
