//! Every user setting Cairn reads: its config key, environment variables, CLI flag, default
//! and kind. The README's settings table is this list (`tests/suite/settings_table.rs` of the
//! CLI compares them), and `cairn config list` walks it.

/// Which file of the config folder holds a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileId {
    /// `config.toml` (`CAIRN_CONFIG_FILE` moves it).
    Config,
    /// `sandbox.toml` (`CAIRN_SANDBOX_FILE` moves it; a repository cannot loosen its sandbox).
    Sandbox,
}

/// What a key's value is, checked by `cairn config set` and the Settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text.
    Text,
    /// A whole number ≥ 0.
    Number,
    /// A fraction in (0, 1].
    Fraction,
    /// `true` or `false`.
    Bool,
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// Comma-separated words (a TOML array in the file).
    List,
    /// A secret: never in a file, kept in the OS keyring entry named here.
    Secret(&'static str),
}

/// One setting.
#[derive(Debug, Clone, Copy)]
pub struct KeySpec {
    /// The config key (`tools.*.timeout_ms`: `*` is one word, e.g. a tool name).
    pub key: &'static str,
    /// Environment variables, the first the canonical one (later ones are older names).
    pub env: &'static [&'static str],
    /// The `cairn run` flag, if the CLI has one.
    pub flag: Option<&'static str>,
    /// The default as the README shows it.
    pub default: &'static str,
    /// What the value is.
    pub kind: Kind,
    /// One line for `cairn config list` and the README.
    pub about: &'static str,
    /// The file that holds it.
    pub file: FileId,
    /// The key's name in that file when it differs (`sandbox.toml` is camelCase and flat).
    pub file_key: Option<&'static str>,
}

const fn key(
    key: &'static str,
    env: &'static [&'static str],
    flag: Option<&'static str>,
    default: &'static str,
    kind: Kind,
    about: &'static str,
) -> KeySpec {
    KeySpec {
        key,
        env,
        flag,
        default,
        kind,
        about,
        file: FileId::Config,
        file_key: None,
    }
}

const fn sandbox(
    k: &'static str,
    file_key: &'static str,
    env: &'static [&'static str],
    flag: Option<&'static str>,
    default: &'static str,
    kind: Kind,
    about: &'static str,
) -> KeySpec {
    KeySpec {
        file: FileId::Sandbox,
        file_key: Some(file_key),
        ..key(k, env, flag, default, kind, about)
    }
}

/// The prompt languages (`language`).
pub const LANGUAGES: &[&str] = &["en", "zh", "zh-TW", "ja", "ko", "es"];
/// The reasoning levels (`reasoning`).
pub const REASONING: &[&str] = &["none", "low", "medium", "high", "xhigh"];

/// Every setting, in the order `cairn config list` and the README show them.
pub const KEYS: &[KeySpec] = &[
    key("provider", &["CAIRN_PROVIDER"], Some("--provider"), "openai", Kind::Text,
        "LLM provider: openai, anthropic, deepseek, openrouter, ollama, lmstudio, gemini, compatible"),
    key("model", &["CAIRN_MODEL", "OPENAI_MODEL"], Some("--model"), "none (required)", Kind::Text,
        "model id"),
    key("base_urls.*", &[], Some("--base-url"), "the provider's", Kind::Text,
        "endpoint per provider (`base_urls.openai`); the provider's variable, e.g. OPENAI_BASE_URL, wins"),
    key("reasoning", &["CAIRN_THINKING_LEVEL", "OPENAI_REASONING_EFFORT"], Some("--reasoning"),
        "the model's", Kind::Choice(REASONING), "reasoning level"),
    key("language", &["CAIRN_LANG"], Some("--lang"), "en", Kind::Choice(LANGUAGES),
        "language of the prompts and the app"),
    key("max_output_tokens", &["CAIRN_MAX_OUTPUT_TOKENS"], Some("--max-output-tokens"),
        "the model's", Kind::Number, "cap on the tokens of one answer"),
    key("retries", &["NETWORK_RETRY_MAX"], Some("--retries"), "2", Kind::Number,
        "retries of a failed LLM request (network, 429, 5xx, known transient 400s)"),
    key("retry_base_ms", &["NETWORK_RETRY_BASE_MS"], None, "800", Kind::Number,
        "first retry delay (doubles each time)"),
    key("approval_timeout", &["CAIRN_APPROVAL_TIMEOUT"], Some("--approval-timeout"), "none",
        Kind::Number, "seconds an approval waits before it is denied (0 = wait)"),
    key("max_iterations", &["CAIRN_MAX_ITERATIONS"], Some("--max-iterations"), "800",
        Kind::Number, "iteration cap of a turn"),
    key("budget_usd", &["CAIRN_BUDGET_USD"], Some("--budget-usd"), "none", Kind::Text,
        "a session's spending cap in dollars (priced models; warns at 80 %)"),
    key("budget_tokens", &["CAIRN_BUDGET_TOKENS"], Some("--budget-tokens"), "none",
        Kind::Number, "a session's spending cap in tokens (input + output)"),
    key("price_per_mtok", &["CAIRN_PRICE_PER_MTOK"], None, "none", Kind::Text,
        "price of a model the table does not know: INPUT,OUTPUT dollars per million tokens"),
    key("context_window", &["CONTEXT_WINDOW"], Some("--context-window"), "detected",
        Kind::Number, "context window in tokens (compaction follows it)"),
    key("agent", &["CAIRN_AGENT"], Some("--agent"), "code", Kind::Text,
        "role: code, cowork or a role of agents.json"),
    key("request_timeout_ms", &["OPENAI_TIMEOUT_MS"], None, "the provider's", Kind::Number,
        "timeout of one LLM request"),
    key("stream_idle_ms", &["OPENAI_STREAM_IDLE_MS"], None, "the provider's", Kind::Number,
        "an LLM stream silent this long is retried"),
    key("api_mode", &["OPENAI_FORCE_API_MODE"], None, "detected",
        Kind::Choice(&["responses", "chat"]), "OpenAI API flavour"),
    key("socks5_proxy", &["SOCKS5_PROXY"], None, "none", Kind::Text,
        "SOCKS5 proxy for LLM requests (web tools: the variable only)"),
    key("compaction.threshold_pct", &["COMPACTION_THRESHOLD_PCT"], None, "0.8", Kind::Fraction,
        "context share that triggers compaction"),
    key("compaction.soft_threshold_pct", &["COMPACTION_SOFT_THRESHOLD_PCT"], None, "none",
        Kind::Fraction, "context share that triggers compaction between turns"),
    key("compaction.cap_tokens", &["COMPACTION_CAP_TOKENS"], None, "none", Kind::Number,
        "compact once the context holds this many tokens"),
    key("compaction.model", &["COMPACTION_MODEL"], None, "the session's", Kind::Text,
        "model that writes compaction summaries (same provider)"),
    key("compaction.reasoning_effort", &["COMPACTION_REASONING_EFFORT"], None, "low",
        Kind::Choice(&["none", "low", "medium", "high"]), "reasoning effort of the summary request"),
    key("compaction.elide", &["COMPACTION_ELIDE"], None, "true", Kind::Bool,
        "elide old tool results at the soft threshold"),
    key("compaction.dedup", &["COMPACTION_DEDUP"], None, "true", Kind::Bool,
        "de-duplicate repeated reads of one file when compacting"),
    key("tool_results.save_threshold", &["TOOL_RESULT_SAVE_THRESHOLD"], None, "32000",
        Kind::Number, "tool results longer than this (chars) are saved to a file"),
    key("tool_results.max_chars", &["TOOL_RESULT_MAX_CHARS"], None, "16000", Kind::Number,
        "chars of a saved result the model sees"),
    key("explore.max_iterations", &["EXPLORE_MAX_ITERATIONS"], None, "30",
        Kind::Number, "iteration cap of the explore subagent"),
    key("subagents.max_depth", &["CAIRN_SUBAGENT_MAX_DEPTH"], None, "2", Kind::Number,
        "how deep subagents nest"),
    key("subagents.max_concurrent", &["CAIRN_SUBAGENT_MAX_CONCURRENT"], None, "4", Kind::Number,
        "subagents running at once"),
    key("subagents.max_open", &["CAIRN_SUBAGENT_MAX_OPEN"], None, "8", Kind::Number,
        "subagents open at once"),
    key("web_search.provider", &["CAIRN_SEARCH_PROVIDER"], None, "the first configured",
        Kind::Choice(&["searxng", "brave", "tavily"]), "web_search provider"),
    key("web_search.searxng_url", &["SEARXNG_URL"], None, "none", Kind::Text,
        "SearXNG instance (offers web_search)"),
    key("web_search.brave_key", &["BRAVE_API_KEY"], None, "none", Kind::Secret("brave"),
        "Brave Search API key (keyring)"),
    key("web_search.tavily_key", &["TAVILY_API_KEY"], None, "none", Kind::Secret("tavily"),
        "Tavily API key (keyring)"),
    key("web_search.endpoint", &["CAIRN_SEARCH_ENDPOINT"], None, "the provider's", Kind::Text,
        "search API URL override"),
    key("vision.model", &["CAIRN_VISION_MODEL"], None, "none", Kind::Text,
        "model that describes images for text-only session models (offers describe_image)"),
    key("vision.provider", &["CAIRN_VISION_PROVIDER"], None, "the session's", Kind::Text,
        "provider of vision.model"),
    key("vision.session_sees_images", &["CAIRN_MODEL_VISION"], None, "the model table",
        Kind::Bool, "whether the session model sees images"),
    key("transcribe.model", &["CAIRN_TRANSCRIBE_MODEL"], None, "none", Kind::Text,
        "audio transcription model"),
    key("transcribe.base_url", &["CAIRN_TRANSCRIBE_BASE_URL"], None, "OPENAI_BASE_URL",
        Kind::Text, "transcription endpoint"),
    key("transcribe.key", &["CAIRN_TRANSCRIBE_API_KEY"], None, "OPENAI_API_KEY",
        Kind::Secret("transcribe"), "transcription API key (keyring)"),
    key("ffprobe", &["CAIRN_FFPROBE"], None, "/usr/bin, /usr/local/bin or /bin", Kind::Text,
        "ffprobe for video metadata"),
    key("tools.disabled", &["CAIRN_DISABLED_TOOLS"], Some("--disable-tool"), "none", Kind::List,
        "tools never offered"),
    key("tools.no_call_description", &["CAIRN_NO_CALL_DESCRIPTION"], None, "none", Kind::List,
        "tools whose `description` argument is off"),
    key("tools.*.enabled", &[], None, "true", Kind::Bool, "offer that tool"),
    key("tools.*.timeout_ms", &[], None, "the tool's", Kind::Number, "that tool's timeout"),
    key("tools.*.max_output_chars", &[], None, "the tool's", Kind::Number,
        "that tool's output cap (the head is kept)"),
    key("worktrees.dir", &["CAIRN_WORKTREES_DIR"], None, "<state dir>-worktrees", Kind::Text,
        "where worktrees go"),
    key("claude_code.user_files", &[], None, "false", Kind::Bool,
        "read ~/.claude (hooks, commands, skills, agents)"),
    sandbox("sandbox.mode", "mode", &["CAIRN_SANDBOX"], Some("--sandbox"), "auto",
        Kind::Choice(&["auto", "off", "required"]), "OS sandbox of commands"),
    sandbox("sandbox.network", "network", &[], Some("--sandbox-network"), "proxy",
        Kind::Choice(&["proxy", "none", "open"]), "network of sandboxed commands"),
    sandbox("sandbox.shell_policy", "shellPolicy", &["CAIRN_SHELL_POLICY"],
        Some("--shell-policy"), "approve", Kind::Choice(&["approve", "sandbox"]),
        "sandbox: sandboxed commands run unasked"),
];

/// The spec of `key` (a pattern key matches any one word in place of `*`).
pub fn spec(key: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|s| matches(s.key, key))
}

/// The spec whose environment variables include `var`.
pub fn spec_for_env(var: &str) -> Option<&'static KeySpec> {
    KEYS.iter().find(|s| s.env.contains(&var))
}

fn matches(pattern: &str, key: &str) -> bool {
    let (p, k): (Vec<&str>, Vec<&str>) = (pattern.split('.').collect(), key.split('.').collect());
    p.len() == k.len()
        && p.iter()
            .zip(&k)
            .all(|(p, k)| if *p == "*" { is_word(k) } else { p == k })
}

/// A key segment that may stand for `*`: a tool or provider name.
fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks `value` for `spec` and gives it as it is stored (trimmed, canonical words).
pub fn check(spec: &KeySpec, value: &str) -> Result<String, String> {
    let v = value.trim();
    match spec.kind {
        Kind::Text | Kind::Secret(_) if v.is_empty() => Err("an empty value: use unset".into()),
        Kind::Text | Kind::Secret(_) => Ok(v.to_string()),
        Kind::Number => v
            .parse::<u64>()
            .map(|n| n.to_string())
            .map_err(|_| format!("`{v}` is not a whole number")),
        Kind::Fraction => match v.parse::<f64>() {
            Ok(f) if f > 0.0 && f <= 1.0 => Ok(v.to_string()),
            _ => Err(format!("`{v}` is not a fraction in (0, 1]")),
        },
        Kind::Bool => match v.to_ascii_lowercase().as_str() {
            "true" | "1" | "on" | "yes" => Ok("true".into()),
            "false" | "0" | "off" | "no" => Ok("false".into()),
            _ => Err(format!("`{v}` is not true or false")),
        },
        Kind::Choice(words) => {
            if spec.key == "language" {
                return cairn_engine::prompt::Lang::parse(v)
                    .map(|l| lang_code(l).to_string())
                    .ok_or_else(|| format!("`{v}` is not one of {}", words.join(", ")));
            }
            let lower = v.to_ascii_lowercase();
            words
                .iter()
                .find(|w| w.eq_ignore_ascii_case(&lower))
                .map(|w| w.to_string())
                .ok_or_else(|| format!("`{v}` is not one of {}", words.join(", ")))
        }
        Kind::List => {
            let words: Vec<&str> = v
                .split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .collect();
            match words.iter().find(|w| !is_word(w)) {
                Some(bad) => Err(format!("`{bad}` is not a name")),
                None => Ok(words.join(",")),
            }
        }
    }
}

/// The code of a prompt language as the config stores it.
pub fn lang_code(lang: cairn_engine::prompt::Lang) -> &'static str {
    use cairn_engine::prompt::Lang;
    match lang {
        Lang::En => "en",
        Lang::Zh => "zh",
        Lang::ZhTw => "zh-TW",
        Lang::Ja => "ja",
        Lang::Ko => "ko",
        Lang::Es => "es",
    }
}

/// The README's settings table, generated from [`KEYS`] (the README must hold it verbatim).
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| config key | environment | `cairn run` flag | default | meaning |\n|---|---|---|---|---|\n",
    );
    for s in KEYS {
        let env = if s.env.is_empty() {
            "—".to_string()
        } else {
            s.env
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let flag = s
            .flag
            .map(|f| format!("`{f}`"))
            .unwrap_or_else(|| "—".into());
        let file = match s.file {
            FileId::Config => String::new(),
            FileId::Sandbox => format!(" (`sandbox.toml`: `{}`)", s.file_key.unwrap_or(s.key)),
        };
        out.push_str(&format!(
            "| `{}`{file} | {env} | {flag} | {} | {} |\n",
            s.key,
            s.default,
            s.about.replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn keys_are_unique_and_patterns_match_one_word() {
        let mut seen = std::collections::BTreeSet::new();
        for s in KEYS {
            assert!(seen.insert(s.key), "{} twice", s.key);
        }
        assert_eq!(
            spec("tools.read_file.timeout_ms").unwrap().key,
            "tools.*.timeout_ms"
        );
        assert!(spec("tools.a.b.timeout_ms").is_none());
        assert!(spec("tools..timeout_ms").is_none());
        assert_eq!(spec_for_env("OPENAI_MODEL").unwrap().key, "model");
        let lang = spec("language").unwrap();
        assert_eq!(check(lang, "zh_tw").unwrap(), "zh-TW");
        assert!(check(lang, "fr").is_err());
        assert_eq!(
            check(spec("tools.disabled").unwrap(), " a, b ,").unwrap(),
            "a,b"
        );
        assert!(check(spec("retries").unwrap(), "-1").is_err());
    }
}
