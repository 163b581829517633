//! What a command line is for allowances: its program, whether a prefix covers it, whether
//! an option past the allowed words writes or runs something.

use cairn_policy::risky_options::risky_option;
use cairn_policy::ShellAnalysis;

/// Whether `command` is more than one plain simple command.
pub fn has_shell_operators(command: &str) -> bool {
    !matches!(ShellAnalysis::of(command), ShellAnalysis::Simple(_))
}

/// Word-boundary prefix match on one plain simple command (never a compound or expanding one).
pub fn command_matches_prefix(command: &str, prefix: &str) -> bool {
    let ShellAnalysis::Simple(words) = ShellAnalysis::of(command) else {
        return false;
    };
    let ShellAnalysis::Simple(prefix_words) = ShellAnalysis::of(prefix) else {
        return false;
    };
    words.len() >= prefix_words.len()
        && words[..prefix_words.len()] == prefix_words[..]
        && risky_option(&words, prefix_words.len()).is_none()
}

/// Whether a plain command has an option past its first `from` words that writes, runs a
/// program or changes configuration (no allowance of those words covers it).
pub(super) fn risky_after(command: &str, from: usize) -> bool {
    match ShellAnalysis::of(command) {
        ShellAnalysis::Simple(words) => risky_option(&words, from).is_some(),
        _ => true,
    }
}

/// The program name of one plain simple command, for session command allowances.
pub fn simple_command_program(command: &str) -> Option<String> {
    match ShellAnalysis::of(command) {
        ShellAnalysis::Simple(words) => words.into_iter().next().filter(|p| !p.contains('/')),
        _ => None,
    }
}
