//! The read corpus (`fixtures/attack_reads.toml`): what a call may *read or show*, not only
//! what it changes. Cases run in the attack corpus's trap-filled world (same session, tools,
//! rules and denying approver) with extra files, links, commits, nested or bare repositories
//! and git config lines. `secrets/key.txt` holds `SECRET-KEY-7f3a` and `{outside}/secret`
//! holds `OUTSIDE-SECRET-7f3a`: no case may ever show `7f3a` to the model. Outcomes are the
//! attack corpus's (`asks`, `denied`, `refused`, `runs`) plus `hidden`: ran without asking,
//! succeeded, and left the denied content out.

use super::*;

/// The token no tool result may contain.
const LEAK: &str = "7f3a";

#[derive(Debug, Deserialize)]
struct ReadCorpus {
    #[serde(rename = "case")]
    cases: Vec<ReadCase>,
}

/// A bare repository at `path` (one commit of `f.txt`) whose config gets `config`, with
/// `info/attributes` sending every file through the `x` diff driver.
#[derive(Debug, Deserialize)]
struct Bare {
    path: String,
    config: String,
}

#[derive(Debug, Deserialize)]
struct ReadCase {
    #[serde(flatten)]
    base: Case,
    /// Files written before the case (relative to the workspace).
    #[serde(default)]
    files: BTreeMap<String, String>,
    /// Symbolic links: path → target.
    #[serde(default)]
    links: BTreeMap<String, String>,
    /// Commit the whole workspace first.
    #[serde(default)]
    commit: bool,
    /// Files written after the commit (unstaged changes).
    #[serde(default)]
    after_commit: BTreeMap<String, String>,
    /// Text appended to `.git/config`.
    git_config: Option<String>,
    /// Folders made into repositories of their own (`git init`), with config text appended.
    #[serde(default)]
    nested_repos: BTreeMap<String, String>,
    bare: Option<Bare>,
    /// Text the result must contain (proof that the tool really ran).
    shows: Option<String>,
    /// Texts the result must not contain (besides `7f3a`), e.g. a denied file's name.
    #[serde(default)]
    hides: Vec<String>,
}

fn commit_all(ws: &Path) {
    let repo = git2::Repository::open(ws).unwrap();
    let mut index = repo.index().unwrap();
    index
        .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
        .unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap();
}

fn bare_repo(dir: &Path, config: &str) {
    let repo = git2::Repository::init_bare(dir).unwrap();
    let blob = repo.blob(b"hello\n").unwrap();
    let mut tb = repo.treebuilder(None).unwrap();
    tb.insert("f.txt", blob, 0o100644).unwrap();
    let tree = repo.find_tree(tb.write().unwrap()).unwrap();
    let sig = git2::Signature::now("t", "t@example.com").unwrap();
    repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
        .unwrap();
    std::fs::create_dir_all(dir.join("info")).unwrap();
    std::fs::write(dir.join("info/attributes"), "* diff=x\n").unwrap();
    append(&dir.join("config"), config);
}

fn append(path: &Path, text: &str) {
    let mut old = std::fs::read(path).unwrap_or_default();
    old.extend_from_slice(text.as_bytes());
    std::fs::write(path, old).unwrap();
}

fn write(ws: &Path, rel: &str, content: &str) {
    let p = ws.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

fn prepare(case: &ReadCase, w: &World) {
    write(&w.ws, "secrets/key.txt", "SECRET-KEY-7f3a\n");
    // A new file (the world's `hard_secret` keeps the old one's content).
    std::fs::remove_file(w.outside.join("secret")).unwrap();
    std::fs::write(w.outside.join("secret"), "OUTSIDE-SECRET-7f3a\n").unwrap();
    for (rel, content) in &case.files {
        write(&w.ws, rel, &fill(content, w));
    }
    for (rel, target) in &case.links {
        let p = w.ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        symlink(fill(target, w), p).unwrap();
    }
    for (rel, config) in &case.nested_repos {
        git2::Repository::init(w.ws.join(rel)).unwrap();
        append(&w.ws.join(rel).join(".git/config"), &fill(config, w));
    }
    if let Some(b) = &case.bare {
        bare_repo(&w.ws.join(&b.path), &fill(&b.config, w));
    }
    if case.commit {
        commit_all(&w.ws);
    }
    for (rel, content) in &case.after_commit {
        write(&w.ws, rel, &fill(content, w));
    }
    if let Some(text) = &case.git_config {
        append(&w.ws.join(".git/config"), &fill(text, w));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_rules_cwd_and_git_config_cases_read_nothing_unapproved() {
    let text = std::fs::read_to_string(
        Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap())
            .join("tests/fixtures/attack_reads.toml"),
    )
    .unwrap();
    let corpus: ReadCorpus = toml::from_str(&text).unwrap();
    let mut ids = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    let mut by_outcome: BTreeMap<String, usize> = BTreeMap::new();
    for case in &corpus.cases {
        let c = &case.base;
        assert!(ids.insert(c.id.clone()), "duplicate case id {}", c.id);
        let tool = c.tool.clone().expect("read cases give `tool`");
        let w = world();
        prepare(case, &w);
        let args = fill_value(c.args.as_ref().expect("args"), &w);
        let before = snapshot(&w.base);
        let o = run_case(c, &tool, args, &w, None).await;
        let mut after = snapshot(&w.base);
        after.retain(|p, _| !p.starts_with(&w.state));
        let mut before_all = before.clone();
        before_all.retain(|p, _| !p.starts_with(&w.state));
        let all = diff(&before_all, &after);
        let guarded_diff = diff(&guarded(&before, &w), &guarded(&after, &w));
        let mut problems = Vec::new();
        if o.result.contains(LEAK) {
            problems.push("the result shows denied or outside content".to_string());
        }
        if let Some(hidden) = case.hides.iter().find(|h| o.result.contains(h.as_str())) {
            problems.push(format!("the result shows `{hidden}`"));
        }
        if let Some(want) = &case.shows {
            if !o.result.contains(want.as_str()) {
                problems.push(format!("the result does not show `{want}`"));
            }
        }
        let outcome = if c.expect == "hidden" {
            let ok = !o.asked && o.status == Some(ToolStatus::Ok) && guarded_diff.is_empty();
            (!ok).then(|| {
                format!(
                    "expected hidden; asked={} status={:?}; changed: {guarded_diff:?}",
                    o.asked, o.status
                )
            })
        } else {
            check(&c.expect, &o, &all, &guarded_diff)
        };
        problems.extend(outcome);
        if !problems.is_empty() {
            failures.push(format!(
                "{}: {}; result: {}",
                c.id,
                problems.join("; "),
                o.result.chars().take(400).collect::<String>()
            ));
        }
        *by_outcome.entry(c.expect.clone()).or_default() += 1;
    }
    eprintln!(
        "read corpus: {} cases; by outcome: {by_outcome:?}",
        corpus.cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} read cases failed:\n{}",
        failures.len(),
        corpus.cases.len(),
        failures.join("\n")
    );
}
