//! The model capability table (`data/models.toml`, embedded): context window, output cap,
//! vision, reasoning, tools, thinking style and prices; user overrides merge into it.

use std::sync::OnceLock;

use cairn_protocol::TokenUsage;
use serde::{Deserialize, Serialize};

use crate::error::ProviderError;

/// Context window assumed for a model the table does not know.
pub const UNKNOWN_CONTEXT_WINDOW: u64 = 128_000;

/// The built-in table.
const BUILTIN: &str = include_str!("../data/models.toml");

/// How a model's reasoning is controlled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingStyle {
    /// OpenAI-style `reasoning_effort` with the model's listed efforts.
    Effort,
    /// Anthropic `thinking: {type: enabled, budget_tokens}`.
    Budget,
    /// Anthropic adaptive thinking with `output_config.effort`.
    Adaptive,
    /// On or off only (DeepSeek): levels are skipped.
    Toggle,
}

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pricing {
    /// Uncached input.
    pub input: f64,
    /// Input read from the prompt cache; `None` = charged as input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
    /// Output (reasoning included).
    pub output: f64,
    /// Input written to the prompt cache (Anthropic); `None` = charged as input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<f64>,
}

impl Pricing {
    /// The cost of `usage` in USD, cache writes charged at the base input price.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        self.cost_with_cache_writes(usage, 0)
    }

    /// The cost of `usage` of which `cache_write_tokens` input tokens were cache writes.
    pub fn cost_with_cache_writes(&self, usage: &TokenUsage, cache_write_tokens: u64) -> f64 {
        let cached = usage.cached_input_tokens.min(usage.input_tokens);
        let writes = cache_write_tokens.min(usage.input_tokens - cached);
        let fresh = usage.input_tokens - cached - writes;
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(fresh, self.input)
            + per(cached, self.cached_input.unwrap_or(self.input))
            + per(writes, self.cache_write.unwrap_or(self.input))
            + per(usage.output_tokens, self.output)
    }
}

/// One row of the table as written: every field but `id` optional, so an override can
/// change only what it names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelEntry {
    /// Model id (or id prefix, see the matching rule in `data/models.toml`).
    pub id: String,
    /// Other names of the same model (e.g. OpenRouter's dotted versions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Most output tokens per response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// Accepts images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Is a reasoning model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<bool>,
    /// Supports tool calls (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<bool>,
    /// How reasoning is controlled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingStyle>,
    /// Effort names the model accepts, lowest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efforts: Option<Vec<String>>,
    /// Prices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Pricing>,
}

impl ModelEntry {
    /// This entry with `other`'s given fields laid over it.
    fn overlaid(&self, other: &ModelEntry) -> ModelEntry {
        let mut aliases = self.aliases.clone();
        aliases.extend(other.aliases.iter().cloned());
        ModelEntry {
            id: self.id.clone(),
            aliases,
            context_window: other.context_window.or(self.context_window),
            max_output: other.max_output.or(self.max_output),
            vision: other.vision.or(self.vision),
            reasoning: other.reasoning.or(self.reasoning),
            tools: other.tools.or(self.tools),
            thinking: other.thinking.or(self.thinking),
            efforts: other.efforts.clone().or_else(|| self.efforts.clone()),
            price: other.price.or(self.price),
        }
    }
}

/// What Cairn knows about one model (defaults filled in).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The table row that matched (`None` = unknown model).
    pub matched: Option<String>,
    /// Context window in tokens ([`UNKNOWN_CONTEXT_WINDOW`] when unknown).
    pub context_window: u64,
    /// Most output tokens per response, when known.
    pub max_output: Option<u64>,
    /// Accepts images.
    pub vision: bool,
    /// Is a reasoning model.
    pub reasoning: bool,
    /// Supports tool calls.
    pub tools: bool,
    /// How reasoning is controlled, when known.
    pub thinking: Option<ThinkingStyle>,
    /// Effort names accepted, lowest first (empty = unknown).
    pub efforts: Vec<String>,
    /// Prices, `None` = unknown price.
    pub price: Option<Pricing>,
}

impl ModelInfo {
    /// Whether the table has a row for the model.
    pub fn is_known(&self) -> bool {
        self.matched.is_some()
    }

    fn from_entry(e: &ModelEntry) -> ModelInfo {
        ModelInfo {
            matched: Some(e.id.clone()),
            context_window: e.context_window.unwrap_or(UNKNOWN_CONTEXT_WINDOW),
            max_output: e.max_output,
            vision: e.vision.unwrap_or(false),
            reasoning: e.reasoning.unwrap_or(false),
            tools: e.tools.unwrap_or(true),
            thinking: e.thinking,
            efforts: e.efforts.clone().unwrap_or_default(),
            price: e.price,
        }
    }

    fn unknown() -> ModelInfo {
        ModelInfo {
            matched: None,
            context_window: UNKNOWN_CONTEXT_WINDOW,
            max_output: None,
            vision: false,
            reasoning: false,
            tools: true,
            thinking: None,
            efforts: Vec::new(),
            price: None,
        }
    }
}

/// The file format: `[[model]]` rows.
#[derive(Debug, Default, Deserialize, Serialize)]
struct TableFile {
    #[serde(default)]
    model: Vec<ModelEntry>,
}

/// A model table: the built-in one, a user's overrides, or both merged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelCatalog {
    entries: Vec<ModelEntry>,
}

impl ModelCatalog {
    /// The embedded table (parsed once). A table that fails to parse (a build defect the
    /// tests catch) yields an empty catalog and an error log, never a panic.
    pub fn builtin() -> &'static ModelCatalog {
        static CATALOG: OnceLock<ModelCatalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            ModelCatalog::from_toml(BUILTIN).unwrap_or_else(|e| {
                tracing::error!(error = %e, "the built-in model table is invalid");
                ModelCatalog::default()
            })
        })
    }

    /// A table from TOML text with `[[model]]` rows.
    pub fn from_toml(text: &str) -> Result<ModelCatalog, ProviderError> {
        let file: TableFile = toml::from_str(text)
            .map_err(|e| ProviderError::InvalidConfig(format!("model table: {e}")))?;
        Self::from_entries(file.model)
    }

    /// A table from a JSON array of rows (the desktop settings format).
    pub fn from_json(text: &str) -> Result<ModelCatalog, ProviderError> {
        let rows: Vec<ModelEntry> = serde_json::from_str(text)
            .map_err(|e| ProviderError::InvalidConfig(format!("model overrides: {e}")))?;
        Self::from_entries(rows)
    }

    /// A table from rows; ids must be non-empty.
    pub fn from_entries(entries: Vec<ModelEntry>) -> Result<ModelCatalog, ProviderError> {
        if let Some(bad) = entries.iter().find(|e| e.id.trim().is_empty()) {
            return Err(ProviderError::InvalidConfig(format!(
                "model table row without an id: {bad:?}"
            )));
        }
        Ok(ModelCatalog { entries })
    }

    /// The rows.
    pub fn entries(&self) -> &[ModelEntry] {
        &self.entries
    }

    /// This table with `overrides` merged in: a row with an existing id replaces only the
    /// fields it gives; new ids are added.
    pub fn merged(&self, overrides: &ModelCatalog) -> ModelCatalog {
        let mut entries = self.entries.clone();
        for o in &overrides.entries {
            let id = o.id.trim().to_ascii_lowercase();
            match entries.iter_mut().find(|e| e.id.to_ascii_lowercase() == id) {
                Some(e) => *e = e.overlaid(o),
                None => entries.push(o.clone()),
            }
        }
        ModelCatalog { entries }
    }

    /// What the table says about `model`; unknown models get 128K and no price.
    pub fn lookup(&self, model: &str) -> ModelInfo {
        let name = bare(model);
        let best = self
            .entries
            .iter()
            .filter_map(|e| {
                std::iter::once(&e.id)
                    .chain(e.aliases.iter())
                    .filter_map(|key| match_len(&name, key))
                    .max()
                    .map(|len| (len, e))
            })
            .max_by_key(|(len, _)| *len);
        best.map_or_else(ModelInfo::unknown, |(_, e)| ModelInfo::from_entry(e))
    }

    /// The cost of `usage` in USD, `None` when the model's price is unknown.
    pub fn cost_usd(&self, model: &str, usage: &TokenUsage) -> Option<f64> {
        self.lookup(model).price.map(|p| p.cost(usage))
    }
}

/// What the built-in table says about `model`.
pub fn model_info(model: &str) -> ModelInfo {
    ModelCatalog::builtin().lookup(model)
}

/// The cost of `usage` on `model` in USD from the built-in table, `None` for an unknown price.
pub fn cost_usd(model: &str, usage: &TokenUsage) -> Option<f64> {
    ModelCatalog::builtin().cost_usd(model, usage)
}

/// The context window of a model the built-in table knows, `None` when unknown.
pub fn context_window_for(model: &str) -> Option<u64> {
    let info = model_info(model);
    info.is_known().then_some(info.context_window)
}

/// Lower-cased model name without a `vendor/` routing prefix.
pub(crate) fn bare(model: &str) -> String {
    let m = model.trim().to_ascii_lowercase();
    match m.rfind('/') {
        Some(i) => m[i + 1..].to_string(),
        None => m,
    }
}

/// The length of `key` when it matches `name` (see the rule in `data/models.toml`).
fn match_len(name: &str, key: &str) -> Option<usize> {
    let key = key.trim().to_ascii_lowercase();
    let rest = name.strip_prefix(key.as_str())?;
    let ok = match rest.chars().next() {
        None => true,
        Some(':' | '@' | '_') => true,
        Some('-') => {
            let segment: &str = rest[1..].split('-').next().unwrap_or("");
            let is_version = !segment.is_empty()
                && segment.len() <= 2
                && segment.bytes().all(|b| b.is_ascii_digit());
            !is_version
        }
        Some(_) => false,
    };
    ok.then_some(key.len())
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
