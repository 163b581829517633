//! Under real bubblewrap: a hidden file inside a hidden folder (Cairn's rules file inside its
//! config folder, both present once the user kept an "always allow") neither breaks the
//! sandbox nor shows through; a hidden path inside a writable folder within is still hidden.

use cairn_policy::sandbox::SandboxSpec;

use crate::common;

#[test]
fn a_hidden_file_inside_a_hidden_folder_runs_the_command_and_shows_neither() {
    let Some(bwrap) = common::bwrap_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ws = root.join("ws");
    let config = root.join("config/cairn");
    let shared = config.join("shared");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(config.join("permissions.toml"), "secret-rules\n").unwrap();
    std::fs::write(shared.join("token"), "secret-token\n").unwrap();
    std::fs::write(shared.join("open.txt"), "visible\n").unwrap();
    let mut spec = SandboxSpec::for_workspace(&ws);
    spec.hidden = vec![
        config.clone(),
        config.join("permissions.toml"),
        shared.join("token"),
    ];
    let script = format!(
        "cat {c}/permissions.toml 2>/dev/null; cat {s}/token 2>/dev/null; \
         cat {s}/open.txt 2>/dev/null; echo ran > {w}/out.txt && echo ran",
        c = config.display(),
        s = shared.display(),
        w = ws.display()
    );
    let run = |extra: &[std::path::PathBuf]| common::run_spec(&bwrap, &spec, extra, &script);
    let (stdout, stderr) = run(&[]);
    assert!(stdout.contains("ran"), "the command ran: {stdout} {stderr}");
    assert!(!stdout.contains("secret"), "{stdout}");
    assert!(
        !stdout.contains("visible"),
        "the folder is hidden: {stdout}"
    );
    // A writable folder inside the hidden one shows again, its hidden file still does not.
    let (stdout, stderr) = run(std::slice::from_ref(&shared));
    assert!(stdout.contains("ran"), "{stdout} {stderr}");
    assert!(stdout.contains("visible"), "{stdout} {stderr}");
    assert!(!stdout.contains("secret"), "{stdout}");
}
