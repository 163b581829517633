//! Interrupted worktree operations: `cairn worktrees apply`, `update` and `remove` killed with
//! SIGKILL at random points (seed printed; `CAIRN_WORKTREE_KILLS=N` runs N kills per
//! operation, a small round by default), after which the next command finishes or rolls
//! back and the folder and the worktree are in one of their two consistent states; and a
//! folder whose disk fills during an apply stays as it was.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use cairn_testkit::git::{digest, git, repo_with};
use cairn_worktree::{open_or_create, CreateOptions, Layout, Repo};
use serde_json::Value;

use crate::suite::crash::disk_full::{fill, Tmpfs};

/// Kills per operation: `CAIRN_WORKTREE_KILLS`, else a small round for CI.
fn kills() -> u64 {
    std::env::var("CAIRN_WORKTREE_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// A seed (`CAIRN_KILL_SEED`, else the clock), printed so a failure can be replayed.
fn seed(op: &str) -> u64 {
    let s = std::env::var("CAIRN_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(7)
        });
    eprintln!("{op} kill suite: CAIRN_KILL_SEED={s}");
    s
}

/// The n-th pseudo-random number of `seed` (no extra dependency).
fn random(seed: u64, n: u64) -> u64 {
    let x = seed
        .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    x >> 17
}

/// A fixture built once under `live/` and copied back from `template/` before every kill
/// (the same absolute paths, which records and `.git` files hold).
struct Fixture {
    _dir: tempfile::TempDir,
    live: PathBuf,
    template: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join("live");
        let template = dir.path().join("template");
        std::fs::create_dir_all(&live).unwrap();
        Fixture {
            live: live.canonicalize().unwrap(),
            template,
            _dir: dir,
        }
    }
    fn folder(&self) -> PathBuf {
        self.live.join("repo")
    }
    fn state(&self) -> PathBuf {
        self.live.join("state")
    }
    fn root(&self) -> PathBuf {
        self.live.join("worktrees")
    }
    fn layout(&self) -> Layout {
        Layout {
            state_dir: self.state(),
            root: self.root(),
        }
    }
    fn worktree(&self, name: &str) -> PathBuf {
        let repo = Repo::discover(&self.folder(), &self.layout()).unwrap();
        repo.worktree_path(name)
    }
    fn create(&self, name: &str) -> PathBuf {
        let repo = Repo::discover(&self.folder(), &self.layout()).unwrap();
        open_or_create(&repo, name, &CreateOptions::default())
            .unwrap()
            .record
            .path
    }
    /// Freezes `live/` as the template.
    fn freeze(&self) {
        copy(&self.live, &self.template);
    }
    /// `live/` as the template holds it.
    fn reset(&self) {
        std::fs::remove_dir_all(&self.live).unwrap();
        copy(&self.template, &self.live);
    }
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.args(args);
        if args.first() == Some(&"worktrees") {
            c.arg("-w").arg(self.folder());
        }
        c.arg("--state-dir")
            .arg(self.state())
            .env("CAIRN_WORKTREES_DIR", self.root())
            .env_remove("CAIRN_STATE_DIR")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }
    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }
    /// Runs `args` killed with SIGKILL (with its children: git) `after` it started or, with
    /// `phase`, `after` that became true (its journal written: the critical part began).
    fn killed(&self, args: &[&str], phase: Option<&dyn Fn() -> bool>, after: Duration) {
        let mut child = self.command(args).process_group(0).spawn().unwrap();
        if let Some(ready) = phase {
            let started = Instant::now();
            while !ready()
                && started.elapsed() < Duration::from_secs(30)
                && child.try_wait().ok().flatten().is_none()
            {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        std::thread::sleep(after);
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = child.wait();
    }
}

fn copy(from: &Path, to: &Path) {
    let out = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Every file, mode and link below `dir` except git's own and the excluded folders.
fn files(dir: &Path) -> String {
    digest(dir, &[".git", "node_modules"])
}

/// The session a pending journal names in `stderr` (`--session ID --recover`).
fn pending_session(stderr: &str) -> Option<String> {
    let at = stderr.find("--recover")?;
    let before = stderr[..at].trim_end();
    before.rsplit(' ').next().map(str::to_string)
}

#[test]
fn a_killed_apply_is_finished_or_rolled_back_and_the_folder_is_before_or_after() {
    let fx = Fixture::new();
    let many: Vec<(String, String)> = (0..1500)
        .map(|i| (format!("f/{}/{i}.txt", i / 100), format!("base {i}\n")))
        .collect();
    let refs: Vec<(&str, &str)> = many.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    repo_with(&fx.folder(), &refs);
    let wt = fx.create("w");
    for i in 0..1500 {
        let p = wt.join(format!("f/{}/{i}.txt", i / 100));
        match i % 30 {
            0 => std::fs::remove_file(p).unwrap(),
            1 => std::fs::write(p.with_extension("new"), format!("new {i}\n")).unwrap(),
            2 => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap()
            }
            3 => std::os::unix::fs::symlink(format!("{i}.txt"), p.with_extension("link")).unwrap(),
            _ => std::fs::write(p, format!("worktree {i}\n")).unwrap(),
        }
    }
    fx.freeze();
    let before = files(&fx.folder());
    let started = Instant::now();
    let full = fx.run(&["worktrees", "apply", "w"]);
    let took = started.elapsed();
    assert!(full.status.success(), "{}", text(&full));
    let after = files(&fx.folder());
    assert_ne!(before, after);

    let seed = seed("apply");
    let window = took.as_millis() as u64 + 50;
    let mut journaled = 0;
    for k in 0..kills() {
        fx.reset();
        // Every other kill lands while the journaled writes run.
        let journal = cairn_vcs::store_dir(&fx.state(), &fx.folder()).join("restore-journal.json");
        let ready = || journal.exists();
        let (phase, at) = if k % 2 == 1 {
            (
                Some(&ready as &dyn Fn() -> bool),
                Duration::from_millis(random(seed, k) % 300),
            )
        } else {
            (None, Duration::from_millis(random(seed, k) % window))
        };
        fx.killed(&["worktrees", "apply", "w"], phase, at);
        let now = files(&fx.folder());
        let next = fx.run(&["worktrees", "apply", "w"]);
        if !next.status.success() {
            // The first error names the interrupted apply and how to resolve it.
            let err = String::from_utf8_lossy(&next.stderr).into_owned();
            assert!(
                err.contains("apply of worktree w"),
                "kill {k} at {at:?}: {err}"
            );
            let session = pending_session(&err)
                .unwrap_or_else(|| panic!("kill {k}: no session named in {err}"));
            journaled += 1;
            let how = if k % 2 == 0 { "finish" } else { "rollback" };
            let rec = fx.run(&["restore", "--session", &session, "--recover", how]);
            assert!(rec.status.success(), "kill {k}: {}", text(&rec));
            let resolved = files(&fx.folder());
            assert!(
                resolved == before || resolved == after,
                "kill {k} at {at:?} ({how}): the folder is neither before nor after"
            );
            let again = fx.run(&["worktrees", "apply", "w"]);
            assert!(again.status.success(), "kill {k}: {}", text(&again));
        } else {
            assert!(
                now == before || now == after,
                "kill {k} at {at:?}: no journal, yet the folder is half applied"
            );
        }
        assert!(
            files(&fx.folder()) == after,
            "kill {k} at {at:?}: not applied in the end"
        );
    }
    eprintln!("apply kills: {journaled} left a journal to finish or roll back");
}

#[test]
fn a_killed_update_is_rolled_back_on_the_next_start_and_the_worktree_is_before_or_after() {
    let fx = Fixture::new();
    let many: Vec<(String, String)> = (0..200)
        .map(|i| (format!("d/{i}.txt"), format!("base {i}\n")))
        .collect();
    let refs: Vec<(&str, &str)> = many.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    repo_with(&fx.folder(), &refs);
    let wt = fx.create("u");
    std::fs::write(wt.join("wt-only.txt"), "worktree\n").unwrap();
    git(&wt, &["add", "-A"]);
    git(&wt, &["commit", "-q", "-m", "worktree work"]);
    std::fs::write(wt.join("uncommitted.txt"), "not committed\n").unwrap();
    for i in 0..200 {
        std::fs::write(
            fx.folder().join(format!("d/{i}.txt")),
            format!("folder {i}\n"),
        )
        .unwrap();
    }
    git(&fx.folder(), &["commit", "-q", "-am", "folder work"]);
    let folder_head = git(&fx.folder(), &["rev-parse", "HEAD"]).trim().to_string();
    fx.freeze();
    let old_head = git(&wt, &["rev-parse", "HEAD"]).trim().to_string();
    let before = files(&wt);
    let started = Instant::now();
    let full = fx.run(&["worktrees", "update", "u"]);
    let took = started.elapsed();
    assert!(full.status.success(), "{}", text(&full));
    let after = files(&wt);
    assert_ne!(before, after);

    // HEAD, index and branch: the old commit, or a merge of it and the folder's HEAD.
    let consistent = |k: u64, at: Duration| -> bool {
        let head = git(&wt, &["rev-parse", "HEAD"]).trim().to_string();
        assert_eq!(
            git(&wt, &["symbolic-ref", "HEAD"]).trim(),
            "refs/heads/cairn/u",
            "kill {k} at {at:?}: HEAD is on the branch"
        );
        let status = git(&wt, &["status", "--porcelain"]);
        assert_eq!(
            status.trim(),
            "?? uncommitted.txt",
            "kill {k} at {at:?}: index is HEAD's"
        );
        let now = files(&wt);
        if head == old_head {
            assert!(
                now == before,
                "kill {k} at {at:?}: rolled back, files differ"
            );
            false
        } else {
            // Merged (both parents) or rebased (onto the folder's HEAD): the same files.
            let has_folder = Command::new("git")
                .current_dir(&wt)
                .args(["merge-base", "--is-ancestor", &folder_head, "HEAD"])
                .status()
                .unwrap()
                .success();
            assert!(
                has_folder,
                "kill {k} at {at:?}: HEAD lacks the folder's commit"
            );
            let log = git(&wt, &["log", "--format=%s", "-n", "3"]);
            assert!(log.contains("worktree work"), "kill {k} at {at:?}: {log}");
            assert!(now == after, "kill {k} at {at:?}: updated, files differ");
            true
        }
    };
    let seed = seed("update");
    let window = took.as_millis() as u64 + 50;
    let (mut finished, mut rolled_back) = (0, 0);
    for k in 0..kills() {
        fx.reset();
        let at = Duration::from_millis(random(seed, k) % window);
        // Every other kill interrupts a rebase instead of a merge.
        let update: &[&str] = if k % 2 == 1 {
            &["worktrees", "update", "u", "--rebase"]
        } else {
            &["worktrees", "update", "u"]
        };
        let journal = Repo::discover(&fx.folder(), &fx.layout())
            .unwrap()
            .records
            .dir()
            .join("u.update.json");
        let ready = || journal.exists();
        let phase = (k % 4 >= 2).then_some(&ready as &dyn Fn() -> bool);
        let at = if phase.is_some() {
            Duration::from_millis(random(seed, k) % (window / 2 + 1))
        } else {
            at
        };
        fx.killed(update, phase, at);
        // The next start (any listing) rolls an interrupted update back.
        let list = fx.run(&["worktrees", "list", "--json"]);
        assert!(list.status.success(), "kill {k}: {}", text(&list));
        let row: Value = serde_json::from_slice(&list.stdout).unwrap();
        assert_eq!(row["broken"], Value::Null, "kill {k}: {row}");
        if consistent(k, at) {
            finished += 1;
        } else {
            rolled_back += 1;
        }
        let again = fx.run(update);
        assert!(again.status.success(), "kill {k}: {}", text(&again));
        assert!(consistent(k, at), "kill {k} at {at:?}: updated in the end");
    }
    eprintln!("update kills: {rolled_back} before, {finished} after the update");
}

#[test]
fn a_killed_remove_is_finished_by_the_next_command_and_stays_restorable() {
    let fx = Fixture::new();
    let mut many: Vec<(String, String)> = (0..200)
        .map(|i| (format!("d/{i}.txt"), format!("base {i}\n")))
        .collect();
    many.push((".gitignore".into(), "*.log\n".into()));
    let refs: Vec<(&str, &str)> = many.iter().map(|(p, c)| (p.as_str(), c.as_str())).collect();
    repo_with(&fx.folder(), &refs);
    let wt = fx.create("r");
    for i in 0..100 {
        std::fs::write(wt.join(format!("d/{i}.txt")), format!("unapplied {i}\n")).unwrap();
    }
    std::fs::write(wt.join("run.log"), "ignored output\n").unwrap();
    fx.freeze();
    let before = files(&wt);
    let started = Instant::now();
    let full = fx.run(&["worktrees", "remove", "r", "--force"]);
    let took = started.elapsed();
    assert!(full.status.success(), "{}", text(&full));
    assert!(!wt.exists());

    let seed = seed("remove");
    let window = took.as_millis() as u64 + 50;
    let mut whole = 0;
    for k in 0..kills() {
        fx.reset();
        let at = Duration::from_millis(random(seed, k) % window);
        // Every other kill lands once the record says the removal began (its state kept,
        // the folder being deleted).
        let record = Repo::discover(&fx.folder(), &fx.layout())
            .unwrap()
            .records
            .dir()
            .join("r.json");
        let ready =
            || std::fs::read_to_string(&record).is_ok_and(|t| t.contains("\"pending\": true"));
        let (phase, at) = if k % 2 == 1 {
            (
                Some(&ready as &dyn Fn() -> bool),
                Duration::from_millis(random(seed, k) % 20),
            )
        } else {
            (None, at)
        };
        fx.killed(&["worktrees", "remove", "r", "--force"], phase, at);
        let list = fx.run(&["worktrees", "list", "--json"]);
        assert!(list.status.success(), "kill {k}: {}", text(&list));
        let listed = !list.stdout.is_empty();
        if listed {
            whole += 1;
            // Not removed yet: the worktree is whole.
            assert!(
                files(&wt) == before,
                "kill {k} at {at:?}: a listed worktree lost files"
            );
            let rm = fx.run(&["worktrees", "remove", "r", "--force"]);
            assert!(rm.status.success(), "kill {k}: {}", text(&rm));
        }
        // Removed (the next command finished it): nothing left, everything restorable.
        assert!(
            !wt.exists(),
            "kill {k} at {at:?}: a half-removed folder is left"
        );
        let registered = git(&fx.folder(), &["worktree", "list"]);
        assert!(!registered.contains("cairn/r"), "kill {k}: {registered}");
        let back = fx.run(&["worktrees", "restore", "r"]);
        assert!(back.status.success(), "kill {k} at {at:?}: {}", text(&back));
        assert!(
            files(&fx.worktree("r")) == before,
            "kill {k} at {at:?}: restored differs"
        );
    }
    eprintln!("remove kills: {whole} left the worktree whole, the others removed it");
}

#[test]
fn a_disk_that_fills_during_apply_fails_clearly_and_leaves_the_folder_as_before() {
    let fx = Fixture::new();
    let mount = fx.live.join("disk");
    let Some(_mounted) = Tmpfs::mount(&mount, "16m") else {
        return;
    };
    // The folder lives on the tiny disk; the state dir and the worktrees do not.
    let folder = mount.join("repo");
    repo_with(&folder, &[("a.txt", "one\n"), ("b.txt", "two\n")]);
    let layout = Layout {
        state_dir: fx.state(),
        root: fx.root(),
    };
    let repo = Repo::discover(&folder, &layout).unwrap();
    let wt = open_or_create(&repo, "big", &CreateOptions::default())
        .unwrap()
        .record
        .path;
    std::fs::write(wt.join("a.txt"), "changed in the worktree\n").unwrap();
    for i in 0..40 {
        std::fs::write(wt.join(format!("big{i}.bin")), vec![b'x'; 200 * 1024]).unwrap();
    }
    // Fill what is left (in an excluded folder, which checkpoints do not snapshot).
    std::fs::create_dir_all(folder.join("node_modules")).unwrap();
    let filler = fill(&folder.join("node_modules"));
    let before = files(&folder);
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .arg("-w")
            .arg(&folder)
            .arg("--state-dir")
            .arg(fx.state())
            .env("CAIRN_WORKTREES_DIR", fx.root())
            .output()
            .unwrap()
    };
    let out = run(&["worktrees", "apply", "big"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(err.contains("rolled back"), "{err}");
    assert!(err.contains("as it was before"), "{err}");
    assert_eq!(files(&folder), before, "the folder is as before");
    let leftovers: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("cairn"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Space freed: the same apply goes through.
    std::fs::remove_file(filler).unwrap();
    let out = run(&["worktrees", "apply", "big"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(folder.join("a.txt")).unwrap(),
        "changed in the worktree\n"
    );
    assert!(folder.join("big39.bin").exists());
}
