//! `cairn auth set|remove|list [PROVIDER]`: API keys in the OS keyring (service `cairn`,
//! one entry per provider), shared with the desktop app. A key is read without echo from
//! the terminal (or from standard input with `--stdin`) and never printed.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use cairn_secrets::{
    env_var_for, validate_provider, ApiKey, KeyStore, OsKeyStore, SecretError, KNOWN_PROVIDERS,
};
use clap::Subcommand;

use crate::EXIT_USAGE;

/// `cairn auth` subcommands.
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Store PROVIDER's key in the OS keyring (typed without echo; `--stdin` reads a line).
    Set {
        /// `openai`, `anthropic`, `deepseek`, `openrouter`, `gemini`, or your own name.
        provider: String,
        /// Read the key from standard input instead of prompting on the terminal.
        #[arg(long)]
        stdin: bool,
    },
    /// Remove PROVIDER's key from the OS keyring.
    Remove {
        /// The provider name.
        provider: String,
    },
    /// Show which providers have a key and where it comes from (never the key itself).
    List {
        /// Only this provider.
        provider: Option<String>,
    },
}

/// Where a key is typed.
pub trait KeyInput {
    /// Reads one key; `prompt` is shown when a person types it.
    fn read_key(&mut self, prompt: &str, from_stdin: bool) -> Result<String, InputError>;
}

/// Why no key could be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// Neither a terminal nor `--stdin`.
    #[error("standard input is not a terminal: pass --stdin to read the key from it")]
    NotATerminal,
    /// Reading failed.
    #[error("could not read the key: {0}")]
    Io(#[from] std::io::Error),
}

/// The process's terminal and standard input.
struct Terminal;

impl KeyInput for Terminal {
    fn read_key(&mut self, prompt: &str, from_stdin: bool) -> Result<String, InputError> {
        if from_stdin {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            return Ok(line);
        }
        if !std::io::stdin().is_terminal() {
            return Err(InputError::NotATerminal);
        }
        Ok(rpassword::prompt_password(prompt)?)
    }
}

/// Runs `cairn auth …` against the OS keyring and this process's terminal.
pub fn run(cmd: AuthCommand) -> ExitCode {
    let env = |n: &str| cairn_engine::secret_env::var(n);
    let code = execute(
        cmd,
        &OsKeyStore::new(),
        &mut Terminal,
        &env,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    ExitCode::from(code)
}

/// A normalised, validated provider name.
fn provider_name(raw: &str) -> Result<String, SecretError> {
    let p = raw.trim().to_ascii_lowercase();
    validate_provider(&p)?;
    Ok(p)
}

/// Exit status for a keyring error: configuration problems are usage errors.
fn code_of(e: &SecretError) -> u8 {
    match e {
        SecretError::InvalidProvider(_) | SecretError::InvalidKey(_) => EXIT_USAGE,
        SecretError::Unavailable(_) | SecretError::Store(_) => 1,
    }
}

/// Runs one auth command; returns the exit status. Nothing written ever contains a key.
pub fn execute(
    cmd: AuthCommand,
    store: &dyn KeyStore,
    input: &mut dyn KeyInput,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let result = match cmd {
        AuthCommand::Set { provider, stdin } => set(&provider, stdin, store, input, env, out, err),
        AuthCommand::Remove { provider } => remove(&provider, store, out),
        AuthCommand::List { provider } => list(provider.as_deref(), store, env, out, err),
    };
    match result {
        Ok(()) => 0,
        Err((code, message)) => {
            let _ = writeln!(err, "error: {message}");
            code
        }
    }
}

type Outcome = Result<(), (u8, String)>;

fn fail(e: SecretError) -> (u8, String) {
    (code_of(&e), e.to_string())
}

fn set(
    raw: &str,
    from_stdin: bool,
    store: &dyn KeyStore,
    input: &mut dyn KeyInput,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Outcome {
    let provider = provider_name(raw).map_err(fail)?;
    let text = input
        .read_key(&format!("API key for {provider} (not shown): "), from_stdin)
        .map_err(|e| (EXIT_USAGE, e.to_string()))?;
    let key = ApiKey::new(&text).map_err(fail)?;
    store.set(&provider, &key).map_err(fail)?;
    let _ = writeln!(out, "stored the {provider} key in the OS keyring");
    if let Some(var) =
        env_var_for(&provider).filter(|v| env(v).is_some_and(|x| !x.trim().is_empty()))
    {
        let _ = writeln!(
            err,
            "note: {var} is set in this environment and takes precedence"
        );
    }
    Ok(())
}

fn remove(raw: &str, store: &dyn KeyStore, out: &mut dyn Write) -> Outcome {
    let provider = provider_name(raw).map_err(fail)?;
    let removed = store.remove(&provider).map_err(fail)?;
    let _ = if removed {
        writeln!(out, "removed the {provider} key from the OS keyring")
    } else {
        writeln!(out, "no {provider} key was stored in the OS keyring")
    };
    Ok(())
}

fn list(
    only: Option<&str>,
    store: &dyn KeyStore,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Outcome {
    let names: Vec<String> = match only {
        Some(p) => vec![provider_name(p).map_err(fail)?],
        None => KNOWN_PROVIDERS
            .iter()
            .filter(|(_, var)| var.is_some())
            .map(|(n, _)| n.to_string())
            .collect(),
    };
    let mut keyring_note: Option<String> = None;
    for name in names {
        let from_env = env_var_for(&name).filter(|v| env(v).is_some_and(|x| !x.trim().is_empty()));
        let in_store = match store.get(&name) {
            Ok(k) => k.is_some(),
            Err(SecretError::Unavailable(reason)) => {
                keyring_note.get_or_insert(reason);
                false
            }
            Err(e) => return Err(fail(e)),
        };
        let source = match (from_env, in_store) {
            (Some(var), true) => format!("environment ({var}); also in the keyring"),
            (Some(var), false) => format!("environment ({var})"),
            (None, true) => "keyring".to_string(),
            (None, false) => "none".to_string(),
        };
        let _ = writeln!(out, "{name}\t{source}");
    }
    if let Some(reason) = keyring_note {
        let _ = writeln!(err, "note: the OS keyring is not available ({reason})");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_secrets::MemoryKeyStore;

    const SECRET: &str = "sk-cli-auth-SECRET-0123456789";

    struct Scripted(Result<String, ()>);

    impl KeyInput for Scripted {
        fn read_key(&mut self, prompt: &str, _from_stdin: bool) -> Result<String, InputError> {
            assert!(prompt.contains("not shown"));
            self.0.clone().map_err(|_| InputError::NotATerminal)
        }
    }

    fn run_cmd(
        cmd: AuthCommand,
        store: &dyn KeyStore,
        typed: Result<&str, ()>,
        env: &[(&str, &str)],
    ) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let env_fn = |n: &str| {
            env.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        let mut input = Scripted(typed.map(String::from));
        let code = execute(cmd, store, &mut input, &env_fn, &mut out, &mut err);
        let (out, err) = (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        );
        assert!(!out.contains(SECRET) && !err.contains(SECRET), "{out}{err}");
        (code, out, err)
    }

    #[test]
    fn set_list_remove_round_trip() {
        let store = MemoryKeyStore::new();
        let set = AuthCommand::Set {
            provider: "Anthropic".into(),
            stdin: true,
        };
        let (code, out, _) = run_cmd(set, &store, Ok(&format!("  {SECRET}\n")), &[]);
        assert_eq!(code, 0);
        assert!(out.contains("stored the anthropic key"), "{out}");
        assert_eq!(store.get("anthropic").unwrap().unwrap().expose(), SECRET);

        let (code, out, _) = run_cmd(
            AuthCommand::List { provider: None },
            &store,
            Err(()),
            &[("OPENAI_API_KEY", "x")],
        );
        assert_eq!(code, 0);
        assert!(out.contains("anthropic\tkeyring"), "{out}");
        assert!(
            out.contains("openai\tenvironment (OPENAI_API_KEY)"),
            "{out}"
        );
        assert!(out.contains("deepseek\tnone"), "{out}");

        let (code, out, _) = run_cmd(
            AuthCommand::Remove {
                provider: "anthropic".into(),
            },
            &store,
            Err(()),
            &[],
        );
        assert_eq!((code, out.contains("removed")), (0, true));
        let (code, out, _) = run_cmd(
            AuthCommand::Remove {
                provider: "anthropic".into(),
            },
            &store,
            Err(()),
            &[],
        );
        assert_eq!((code, out.contains("no anthropic key")), (0, true));
    }

    #[test]
    fn errors_are_clear_and_never_echo_the_key() {
        let store = MemoryKeyStore::new();
        let bad_name = AuthCommand::Set {
            provider: "my provider".into(),
            stdin: true,
        };
        let (code, _, err) = run_cmd(bad_name, &store, Ok(SECRET), &[]);
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("invalid provider name"), "{err}");
        let spaced = AuthCommand::Set {
            provider: "openai".into(),
            stdin: true,
        };
        let (code, _, err) = run_cmd(
            spaced,
            &store,
            Ok("sk-cli-auth-SECRET-0123456789 extra"),
            &[],
        );
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("invalid API key"), "{err}");
        let no_tty = AuthCommand::Set {
            provider: "openai".into(),
            stdin: false,
        };
        let (code, _, err) = run_cmd(no_tty, &store, Err(()), &[]);
        assert_eq!(code, EXIT_USAGE);
        assert!(err.contains("--stdin"), "{err}");
        let shadowed = AuthCommand::Set {
            provider: "openai".into(),
            stdin: true,
        };
        let (code, _, err) = run_cmd(shadowed, &store, Ok(SECRET), &[("OPENAI_API_KEY", "other")]);
        assert_eq!(code, 0);
        assert!(err.contains("OPENAI_API_KEY is set"), "{err}");
        let down = MemoryKeyStore::unavailable("no D-Bus session bus");
        let set = AuthCommand::Set {
            provider: "openai".into(),
            stdin: true,
        };
        let (code, _, err) = run_cmd(set, &down, Ok(SECRET), &[]);
        assert_eq!(code, 1);
        assert!(
            err.contains("not available") && err.contains("D-Bus"),
            "{err}"
        );
        let (code, out, err) = run_cmd(
            AuthCommand::List {
                provider: Some("gemini".into()),
            },
            &down,
            Err(()),
            &[],
        );
        assert_eq!(code, 0);
        assert_eq!(out, "gemini\tnone\n");
        assert!(err.contains("not available"), "{err}");
    }
}
