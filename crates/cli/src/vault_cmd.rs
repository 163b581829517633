//! `cairn vault list|set|remove`: variables added to the environment of the agent's
//! commands, each for some roles; values in the OS keyring (or, with none, sealed in the
//! config folder, said once), never printed. The first command migrates the old
//! `<state dir>/vault.toml`.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::ExitCode;

use cairn_runtime::vault::{Stored, Vault};
use clap::Subcommand;

use crate::EXIT_USAGE;

/// `cairn vault` subcommands.
#[derive(Debug, Subcommand)]
pub enum VaultCommand {
    /// The entries: name, roles and where the value is (never the value).
    List {
        /// One JSON object per line: {"name", "roles", "store"}.
        #[arg(long)]
        json: bool,
        /// The state dir whose old vault.toml is migrated [default: the app's data dir].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Set NAME; its value is read from standard input (one line), never from the command
    /// line.
    Set {
        /// The variable's name.
        name: String,
        /// A role that gets it (repeatable) [default: every role].
        #[arg(long = "role", value_name = "ROLE")]
        roles: Vec<String>,
        /// The state dir whose old vault.toml is migrated [default: the app's data dir].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
    /// Remove NAME and its value.
    Remove {
        /// The variable's name.
        name: String,
        /// The state dir whose old vault.toml is migrated [default: the app's data dir].
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
    },
}

fn store_word(s: Stored) -> &'static str {
    match s {
        Stored::Keyring => "keyring",
        Stored::File => "file",
    }
}

/// Runs a `cairn vault` subcommand.
pub fn run(command: VaultCommand) -> ExitCode {
    let Some(vault) = Vault::for_user() else {
        errln!("error: no config folder: set CAIRN_CONFIG_FILE");
        return ExitCode::from(EXIT_USAGE);
    };
    let state_dir = match &command {
        VaultCommand::List { state_dir, .. }
        | VaultCommand::Set { state_dir, .. }
        | VaultCommand::Remove { state_dir, .. } => state_dir.clone(),
    }
    .unwrap_or_else(cairn_runtime::default_state_dir);
    match vault.migrate_legacy(&state_dir) {
        Ok(Some(note)) => errln!("note: {note}"),
        Ok(None) => {}
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::FAILURE;
        }
    }
    match command {
        VaultCommand::List { json, .. } => match vault.list() {
            Ok(entries) => {
                for e in entries {
                    if json {
                        outln!(
                            "{}",
                            serde_json::json!({"name": e.name, "roles": e.roles, "store": store_word(e.store)})
                        );
                    } else {
                        outln!(
                            "{:<28} {:<24} {}",
                            e.name,
                            e.roles.join(","),
                            store_word(e.store)
                        );
                    }
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("error: {e}");
                ExitCode::FAILURE
            }
        },
        VaultCommand::Set { name, roles, .. } => {
            let mut line = String::new();
            if let Err(e) = std::io::stdin().lock().read_line(&mut line) {
                errln!("error: could not read the value: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
            let value = line.trim_end_matches(['\n', '\r']);
            match vault.set(&name, value, &roles) {
                Ok((store, note)) => {
                    if let Some(n) = note {
                        errln!("note: {n}");
                    }
                    let who = if roles.is_empty() {
                        "every role".to_string()
                    } else {
                        roles.join(", ")
                    };
                    errln!("{name} set for {who} ({})", store_word(store));
                    ExitCode::SUCCESS
                }
                Err(e @ cairn_runtime::vault::VaultError::BadName(_)) => {
                    errln!("error: {e}");
                    ExitCode::from(EXIT_USAGE)
                }
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        VaultCommand::Remove { name, .. } => match vault.remove(&name) {
            Ok(true) => {
                errln!("{name} removed");
                ExitCode::SUCCESS
            }
            Ok(false) => {
                errln!("error: no vault entry `{name}`");
                ExitCode::from(EXIT_USAGE)
            }
            Err(e) => {
                errln!("error: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
