//! The settings flags `cairn run` and `cairn acp` share (each one a key of the user's
//! settings, `cairn config list`): a flag wins over its environment variable, which wins over
//! the config file, which wins over the default.

use clap::Args;

/// `--reasoning`, `--lang`, `--max-output-tokens`, `--retries`, `--approval-timeout` and
/// `--disable-tool`.
#[derive(Debug, Clone, Default, Args)]
pub struct SettingFlags {
    /// Reasoning level: none, low, medium, high, xhigh [default: $CAIRN_THINKING_LEVEL, else
    /// the `reasoning` setting, else the model's].
    #[arg(long, value_name = "LEVEL")]
    pub reasoning: Option<String>,
    /// Language of the prompts: en, zh, zh-TW, ja, ko, es [default: $CAIRN_LANG, else the
    /// `language` setting, else en].
    #[arg(long, value_name = "LANG")]
    pub lang: Option<String>,
    /// Cap on the tokens of one answer [default: $CAIRN_MAX_OUTPUT_TOKENS, else the
    /// `max_output_tokens` setting, else the model's].
    #[arg(long, value_name = "TOKENS")]
    pub max_output_tokens: Option<u64>,
    /// Retries of a failed LLM request [default: $NETWORK_RETRY_MAX, else the `retries`
    /// setting, else 2].
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,
    /// Seconds an approval or question waits before it is denied; 0 waits
    /// [default: $CAIRN_APPROVAL_TIMEOUT, else the `approval_timeout` setting, else no limit].
    #[arg(long, value_name = "SECS")]
    pub approval_timeout: Option<u64>,
    /// A tool never offered to the model (repeatable), besides the `tools.disabled` setting.
    #[arg(long = "disable-tool", value_name = "NAME")]
    pub disable_tool: Vec<String>,
}

impl SettingFlags {
    /// Sets what these flags decide in `options`; a value that is not valid is the error to
    /// print (exit 2).
    pub fn apply(&self, options: &mut cairn_runtime::RunOptions) -> Result<(), String> {
        if let Some(r) = &self.reasoning {
            use cairn_runtime::user_config::schema;
            let spec = schema::spec("reasoning").ok_or("no reasoning setting")?;
            let level = schema::check(spec, r).map_err(|why| format!("--reasoning: {why}"))?;
            options.reasoning = Some(level);
        }
        if let Some(l) = &self.lang {
            options.language =
                Some(cairn_engine::prompt::Lang::parse(l).ok_or_else(|| {
                    format!("--lang `{l}`: expected en, zh, zh-TW, ja, ko or es")
                })?);
        }
        if self.max_output_tokens == Some(0) {
            return Err("--max-output-tokens must be at least 1".into());
        }
        options.max_output_tokens = self.max_output_tokens;
        options.retries = self.retries;
        options.approval_timeout = self.approval_timeout.map(std::time::Duration::from_secs);
        options.disabled_tools = self.disable_tool.clone();
        Ok(())
    }
}
