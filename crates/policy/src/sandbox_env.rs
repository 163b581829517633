//! The environment of a sandboxed command, named rather than inherited: a command starts
//! from an empty environment plus the variables listed here (found in Cairn's own), the
//! user's pass-through list (`sandbox.toml` `env = [...]`) and what Cairn sets itself (the
//! `CAIRN_RUN` marker, vault entries, `PAGER`, the private-cache variables). Never the
//! desktop session's doors (`DISPLAY`, `DBUS_SESSION_BUS_ADDRESS`, `SSH_AUTH_SOCK`, …) nor a
//! variable named like a secret, even when listed.

/// Variables passed from Cairn's environment to every sandboxed command when set.
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    // Where the Rust toolchain lives when not in the default place.
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
];

/// Proxy variables, both cases, passed when set.
pub const PROXY_ENV: &[&str] = &[
    "http_proxy",
    "https_proxy",
    "ftp_proxy",
    "all_proxy",
    "no_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "FTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
];

/// Variables that never reach a sandboxed command, even when the user lists them: each
/// opens a door out of the sandbox (the display, the session bus, the agents holding keys)
/// or changes how every program is loaded.
pub const NEVER_ENV: &[&str] = &[
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "WAYLAND_SOCKET",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    "XDG_RUNTIME_DIR",
    "KRB5CCNAME",
    "LD_PRELOAD",
    "LD_AUDIT",
];

/// Whether `name` may be passed in when the user's pass-through list names it (or it is a
/// base or proxy variable): not on [`NEVER_ENV`], not named like a secret, a plain name.
pub fn passable(name: &str, is_secret: &dyn Fn(&str) -> bool) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !NEVER_ENV.contains(&name)
        && !is_secret(name)
}

/// The variables of `parent` (Cairn's environment) a sandboxed command starts with: the
/// [`BASE_ENV`], `LC_*`, [`PROXY_ENV`] and `pass_through` names, each [`passable`].
pub fn sandbox_env(
    parent: impl IntoIterator<Item = (String, String)>,
    pass_through: &[String],
    is_secret: &dyn Fn(&str) -> bool,
) -> Vec<(String, String)> {
    parent
        .into_iter()
        .filter(|(k, _)| {
            let named = BASE_ENV.contains(&k.as_str())
                || k.starts_with("LC_")
                || PROXY_ENV.contains(&k.as_str())
                || pass_through.iter().any(|p| p == k);
            named && passable(k, is_secret)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_named_variables_pass_and_never_the_desktop_or_secrets() {
        let parent = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("https_proxy", "http://proxy:3128"),
            ("DISPLAY", ":0"),
            ("SSH_AUTH_SOCK", "/run/user/1/ssh"),
            ("JAVA_HOME", "/opt/jdk"),
            ("RANDOM_THING", "x"),
            ("DEPLOY_TOKEN", "t"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let pass = ["JAVA_HOME", "DISPLAY", "DEPLOY_TOKEN"].map(String::from);
        let secret = |n: &str| n.ends_with("_TOKEN");
        let env = sandbox_env(parent, &pass, &secret);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["PATH", "LC_ALL", "https_proxy", "JAVA_HOME"]);
    }
}
