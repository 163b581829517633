//! Hidden `cairn completions SHELL` and `cairn man DIR`: shell completions and man pages
//! generated from the CLI definition itself (the package ships them; nothing is written by
//! hand, so they cannot drift from the flags).

use std::path::Path;
use std::process::ExitCode;

use clap::ValueEnum;

/// The shells `cairn completions` writes for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Shell {
    /// bash (bash-completion).
    Bash,
    /// zsh.
    Zsh,
    /// fish.
    Fish,
}

/// Prints the completion script for `shell` of the command `cmd`.
pub fn completions(mut cmd: clap::Command, shell: Shell) -> ExitCode {
    let name = cmd.get_name().to_string();
    let mut out = std::io::stdout();
    match shell {
        Shell::Bash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, name, &mut out)
        }
        Shell::Zsh => clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, name, &mut out),
        Shell::Fish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut cmd, name, &mut out)
        }
    }
    ExitCode::SUCCESS
}

/// Writes `cairn.1` and one page per subcommand (`cairn-run.1`, …) into `dir`.
pub fn man(cmd: clap::Command, dir: &Path) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(dir) {
        errln!("error: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    match clap_mangen::generate_to(cmd, dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            errln!(
                "error: cannot write the man pages to {}: {e}",
                dir.display()
            );
            ExitCode::FAILURE
        }
    }
}
