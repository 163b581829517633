//! Thinking level (seed 000 `thinkingLevel`: none/low/medium/high/xhigh) mapped to each
//! provider's reasoning parameter, using the model table's thinking style and efforts.

use cairn_engine::ReasoningEffort;
use serde::{Deserialize, Serialize};

use crate::catalog::{ModelInfo, ThinkingStyle};

/// How hard the model should think, per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    /// No reasoning (or the least the model allows).
    None,
    /// Light reasoning.
    Low,
    /// Default-level reasoning.
    Medium,
    /// Deep reasoning.
    High,
    /// The deepest level below a model's unbounded "max".
    XHigh,
}

impl ThinkingLevel {
    /// Parses `none|off|low|medium|high|xhigh` (case-insensitive).
    pub fn parse(s: &str) -> Option<ThinkingLevel> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" | "off" => Some(ThinkingLevel::None),
            "low" => Some(ThinkingLevel::Low),
            "medium" => Some(ThinkingLevel::Medium),
            "high" => Some(ThinkingLevel::High),
            "xhigh" => Some(ThinkingLevel::XHigh),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ThinkingLevel::None => "none",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
            ThinkingLevel::XHigh => "xhigh",
        }
    }
}

impl From<ReasoningEffort> for ThinkingLevel {
    fn from(e: ReasoningEffort) -> Self {
        match e {
            ReasoningEffort::Low => ThinkingLevel::Low,
            ReasoningEffort::Medium => ThinkingLevel::Medium,
            ReasoningEffort::High => ThinkingLevel::High,
        }
    }
}

/// The level of one request: the request's own effort, else the client's default.
pub(crate) fn request_level(
    effort: Option<ReasoningEffort>,
    default: Option<ThinkingLevel>,
) -> Option<ThinkingLevel> {
    effort.map(ThinkingLevel::from).or(default)
}

/// Effort names in increasing order, for picking the nearest supported one.
const ORDER: &[&str] = &["none", "minimal", "low", "medium", "high", "xhigh", "max"];

fn rank(effort: &str) -> Option<usize> {
    ORDER.iter().position(|e| *e == effort)
}

/// The supported effort nearest to `wanted` (ties go lower), never above `xhigh` and never
/// turning reasoning on when `none` was asked.
fn nearest(wanted: &str, supported: &[String]) -> Option<String> {
    if supported.iter().any(|s| s == wanted) {
        return Some(wanted.to_string());
    }
    let w = rank(wanted)?;
    if wanted == "none" {
        return supported.iter().find(|s| *s == "minimal").cloned();
    }
    supported
        .iter()
        .filter_map(|s| rank(s).map(|r| (r, s)))
        .filter(|(r, _)| *r >= 2 && *r <= 5)
        .min_by_key(|(r, _)| (r.abs_diff(w), *r))
        .map(|(_, s)| s.clone())
}

/// OpenAI-style effort (`reasoning_effort`, Responses `reasoning.effort`, OpenRouter
/// `reasoning.effort`, Gemini's `reasoning_effort`), `None` = send nothing. Skipped for
/// toggle-only models (DeepSeek) and models the table knows do not reason.
pub(crate) fn openai_effort(level: ThinkingLevel, info: &ModelInfo) -> Option<String> {
    if info.thinking == Some(ThinkingStyle::Toggle) || (info.is_known() && !info.reasoning) {
        return None;
    }
    if info.efforts.is_empty() {
        return match level {
            ThinkingLevel::None => None,
            ThinkingLevel::XHigh => Some("high".into()),
            other => Some(other.as_str().into()),
        };
    }
    nearest(level.as_str(), &info.efforts)
}

/// Anthropic's thinking parameters for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AnthropicThinking {
    /// No `thinking` field.
    Off,
    /// `thinking: {type: "enabled", budget_tokens}`.
    Budget(u64),
    /// `thinking: {type: "adaptive"}` with an optional `output_config.effort`.
    Adaptive(Option<String>),
}

/// Smallest budget Anthropic accepts.
const MIN_BUDGET: u64 = 1024;

/// Anthropic thinking for `level` on a model allowed `max_tokens` of output.
pub(crate) fn anthropic_thinking(
    level: ThinkingLevel,
    info: &ModelInfo,
    max_tokens: u64,
) -> AnthropicThinking {
    if level == ThinkingLevel::None || (info.is_known() && !info.reasoning) {
        return AnthropicThinking::Off;
    }
    if info.thinking == Some(ThinkingStyle::Adaptive) {
        return AnthropicThinking::Adaptive(nearest(level.as_str(), &info.efforts));
    }
    let wanted: u64 = match level {
        ThinkingLevel::None => 0,
        ThinkingLevel::Low => 2_048,
        ThinkingLevel::Medium => 8_192,
        ThinkingLevel::High => 16_384,
        ThinkingLevel::XHigh => 32_768,
    };
    // The budget must stay below max_tokens with room for the answer.
    let room = max_tokens.saturating_sub(MIN_BUDGET);
    let budget = wanted.min(room);
    if budget < MIN_BUDGET {
        AnthropicThinking::Off
    } else {
        AnthropicThinking::Budget(budget)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::model_info;

    #[test]
    fn parse_and_convert() {
        assert_eq!(ThinkingLevel::parse("XHigh"), Some(ThinkingLevel::XHigh));
        assert_eq!(ThinkingLevel::parse("off"), Some(ThinkingLevel::None));
        assert_eq!(ThinkingLevel::parse("max"), None);
        assert_eq!(
            ThinkingLevel::from(ReasoningEffort::Medium),
            ThinkingLevel::Medium
        );
        assert_eq!(
            request_level(Some(ReasoningEffort::Low), Some(ThinkingLevel::XHigh)),
            Some(ThinkingLevel::Low)
        );
        assert_eq!(
            request_level(None, Some(ThinkingLevel::XHigh)),
            Some(ThinkingLevel::XHigh)
        );
    }

    #[test]
    fn openai_efforts_follow_the_table() {
        use ThinkingLevel as L;
        let cases = [
            ("gpt-5", L::None, Some("minimal")),
            ("gpt-5", L::XHigh, Some("high")),
            ("gpt-5.1", L::None, Some("none")),
            ("gpt-5.2", L::XHigh, Some("xhigh")),
            ("gpt-5.1-codex-max", L::None, None),
            ("gpt-5.1-codex-max", L::Low, Some("low")),
            ("o3", L::None, None),
            ("o3", L::Medium, Some("medium")),
            ("gpt-4o", L::High, None),
            ("deepseek-reasoner", L::High, None),
            ("deepseek-chat", L::High, None),
            ("gemini-2.5-flash", L::None, Some("none")),
            ("unknown-model", L::High, Some("high")),
            ("unknown-model", L::XHigh, Some("high")),
            ("unknown-model", L::None, None),
        ];
        for (model, level, want) in cases {
            assert_eq!(
                openai_effort(level, &model_info(model)).as_deref(),
                want,
                "{model} {level:?}"
            );
        }
    }

    #[test]
    fn anthropic_budgets_and_adaptive() {
        use AnthropicThinking as A;
        let sonnet = model_info("claude-sonnet-4-5");
        assert_eq!(
            anthropic_thinking(ThinkingLevel::None, &sonnet, 64_000),
            A::Off
        );
        assert_eq!(
            anthropic_thinking(ThinkingLevel::High, &sonnet, 64_000),
            A::Budget(16_384)
        );
        let opus = model_info("claude-opus-4-1");
        assert_eq!(
            anthropic_thinking(ThinkingLevel::XHigh, &opus, 32_000),
            A::Budget(30_976),
            "clamped below max_tokens"
        );
        assert_eq!(
            anthropic_thinking(ThinkingLevel::Low, &opus, 1_500),
            A::Off,
            "no room for a budget"
        );
        let adaptive = model_info("claude-opus-4-6");
        assert_eq!(
            anthropic_thinking(ThinkingLevel::XHigh, &adaptive, 128_000),
            A::Adaptive(Some("high".into()))
        );
        assert_eq!(
            anthropic_thinking(ThinkingLevel::Low, &adaptive, 128_000),
            A::Adaptive(Some("low".into()))
        );
        assert_eq!(
            anthropic_thinking(ThinkingLevel::High, &model_info("claude-3-5-haiku"), 8_192),
            A::Off,
            "a model without thinking"
        );
    }
}
