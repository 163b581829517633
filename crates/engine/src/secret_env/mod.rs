//! Secret environment variables: which names hold credentials (a rule, not a hand list), and
//! the process's private copy of them once [`seal_process`] took them out of the
//! environment block, so neither the commands Cairn runs nor anything reading
//! `/proc/<pid>/environ` sees them.
//!
//! The rule ([`is_secret_name`], case-insensitive): every variable Cairn itself reads as a
//! secret ([`KNOWN_SECRET_ENV`]), plus any name that is `API_KEY`, `APIKEY`, `TOKEN`,
//! `SECRET`, `PASSWORD` or `PASSWD`, or ends in `_API_KEY`, `_APIKEY`, `_KEY`, `_TOKEN`,
//! `_SECRET`, `_PASSWORD`, `_PASSWD`. Deliberately not matched: `SSH_AUTH_SOCK` (a socket
//! path; hiding the agent socket is the sandbox's job), `*_KEY_ID` and `*_CREDENTIALS`
//! (identifiers and file paths).

mod handover;
mod seal;

use std::sync::OnceLock;

pub use seal::{seal_process, SealReport};

/// Variables Cairn reads as secrets (provider, search, transcription and vision keys).
pub const KNOWN_SECRET_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "CAIRN_TRANSCRIBE_API_KEY",
    "CAIRN_VISION_API_KEY",
    "CAIRN_SEARCH_API_KEY",
    "BRAVE_API_KEY",
    "TAVILY_API_KEY",
    // The nonce of a secret hand-over (see `handover`): never passed on to commands.
    "CAIRN_SEALED_STDIN",
];

/// Whole names that are secrets.
const SECRET_NAMES: &[&str] = &["API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"];

/// Name endings that mark a secret.
const SECRET_SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_KEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_PASSWD",
];

/// Whether the variable `name` holds a credential (case-insensitive).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    KNOWN_SECRET_ENV.contains(&upper.as_str())
        || SECRET_NAMES.contains(&upper.as_str())
        || SECRET_SUFFIXES.iter().any(|s| upper.ends_with(s))
}

/// The secrets taken out of the environment at start-up (empty until sealed).
static SEALED: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// The variables [`seal_process`] took out of the environment, with their values.
pub fn sealed() -> &'static [(String, String)] {
    SEALED.get().map(Vec::as_slice).unwrap_or(&[])
}

/// `name`'s value: the sealed copy when the process sealed it, else the environment.
pub fn var(name: &str) -> Option<String> {
    sealed()
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var(name).ok())
}

/// Every secret variable this process knows, sealed or still in the environment.
pub fn secret_vars() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = sealed().to_vec();
    for (k, v) in std::env::vars_os() {
        let (Some(k), Some(v)) = (k.to_str(), v.to_str()) else {
            continue;
        };
        if is_secret_name(k) && !out.iter().any(|(n, _)| n == k) {
            out.push((k.to_string(), v.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_follow_the_rule() {
        for name in [
            "OPENAI_API_KEY",
            "BRAVE_API_KEY",
            "TAVILY_API_KEY",
            "GITHUB_TOKEN",
            "gh_token",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "CLIENT_SECRET",
            "SIGNING_KEY",
            "TOKEN",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "SSH_AUTH_SOCK",
            "KEYRING_DIR",
            "TOKENIZERS_PARALLELISM",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AWS_ACCESS_KEY_ID",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }
}
