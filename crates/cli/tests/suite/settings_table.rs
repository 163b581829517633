//! The README's settings table is the settings schema (every key with its default, flag,
//! config key and environment variables), and every flag of `cairn run` that sets a
//! preference is a key of it: neither can drift. Regenerate the table with
//! `CAIRN_UPDATE_README=1 cargo test -p cairn-cli --test all suite::settings_table`.

use std::collections::BTreeSet;

use cairn_runtime::user_config::schema;

const BEGIN: &str = "<!-- settings-table:begin -->\n";
const END: &str = "<!-- settings-table:end -->";

/// `cairn run` flags that are not preferences (what to run, where, and how to show it).
const NOT_SETTINGS: &[&str] = &[
    "--workspace",
    "--state-dir",
    "--session",
    "--name",
    "--mode",
    "--approve",
    "--allow-command",
    "--sandbox-writable",
    "--sandbox-hide",
    "--allow-domain",
    "--vcs",
    "--json",
    "--attach",
    "--steer-from",
    "--resume",
    "--worktree",
    "--carry-changes",
    "--help",
];

#[test]
fn the_readme_settings_table_is_the_schema() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let start = readme
        .find(BEGIN)
        .expect("the README has the settings table markers")
        + BEGIN.len();
    let end = readme[start..].find(END).expect("the table's end marker") + start;
    let table = schema::markdown_table();
    if std::env::var_os("CAIRN_UPDATE_README").is_some() {
        let updated = format!("{}{table}{}", &readme[..start], &readme[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        &readme[start..end],
        table,
        "the README's settings table differs from user_config::schema::KEYS; regenerate it \
         with CAIRN_UPDATE_README=1 cargo test -p cairn-cli --test all suite::settings_table"
    );
}

#[test]
fn every_preference_flag_of_cairn_run_is_a_settings_key_and_every_key_flag_exists() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let flags: BTreeSet<String> = help
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        })
        .collect();
    let in_schema: BTreeSet<String> = schema::KEYS
        .iter()
        .filter_map(|k| k.flag.map(str::to_string))
        .collect();
    for f in &in_schema {
        assert!(
            flags.contains(f),
            "the schema names {f}, which `cairn run` lacks: {flags:?}"
        );
    }
    for f in &flags {
        assert!(
            in_schema.contains(f) || NOT_SETTINGS.contains(&f.as_str()),
            "`cairn run {f}` is neither a settings key (user_config::schema::KEYS) nor listed \
             as a non-setting flag here"
        );
    }
}
