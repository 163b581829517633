//! System prompts: `build_instructions(agent type, language, environment, project notes)`.
//! The prompt texts live in `crates/engine/prompts/<agent>.<lang>.md`, one file per agent
//! type and language, each with the same `[[section]]` markers.

use serde::{Deserialize, Serialize};

/// Which built-in agent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentType {
    /// Coding assistant.
    #[default]
    Code,
    /// General collaboration.
    Cowork,
}

/// Language of prompts, names and summaries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Lang {
    #[serde(rename = "zh")]
    Zh,
    #[default]
    #[serde(rename = "en")]
    En,
    #[serde(rename = "zh-TW")]
    ZhTw,
    #[serde(rename = "ja")]
    Ja,
    #[serde(rename = "ko")]
    Ko,
    #[serde(rename = "es")]
    Es,
}

impl Lang {
    /// Every supported language.
    pub const ALL: [Lang; 6] = [Lang::Zh, Lang::En, Lang::ZhTw, Lang::Ja, Lang::Ko, Lang::Es];

    /// Parses `zh`, `en`, `zh-TW`, `ja`, `ko`, `es` (also `zh_TW`, `zh-Hant`, case-insensitive).
    pub fn parse(s: &str) -> Option<Lang> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "zh" | "zh-cn" | "zh-hans" => Some(Lang::Zh),
            "en" | "en-us" | "en-gb" => Some(Lang::En),
            "zh-tw" | "zh-hant" | "zh-hk" => Some(Lang::ZhTw),
            "ja" | "ja-jp" => Some(Lang::Ja),
            "ko" | "ko-kr" => Some(Lang::Ko),
            "es" | "es-es" => Some(Lang::Es),
            _ => None,
        }
    }

    /// The language's name in English and in itself, for instructions to a model.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Zh => "Simplified Chinese (简体中文)",
            Lang::En => "English",
            Lang::ZhTw => "Traditional Chinese (繁體中文)",
            Lang::Ja => "Japanese (日本語)",
            Lang::Ko => "Korean (한국어)",
            Lang::Es => "Spanish (español)",
        }
    }

    /// The code used in file names.
    pub fn code(self) -> &'static str {
        match self {
            Lang::Zh => "zh",
            Lang::En => "en",
            Lang::ZhTw => "zh-TW",
            Lang::Ja => "ja",
            Lang::Ko => "ko",
            Lang::Es => "es",
        }
    }
}

/// Section markers every prompt file has, in order.
pub const SECTIONS: [&str; 5] = ["identity", "workflow", "tools", "safety", "style"];

/// The raw prompt template of an agent type and language.
pub fn template(agent: AgentType, lang: Lang) -> &'static str {
    use AgentType::*;
    use Lang::*;
    match (agent, lang) {
        (Code, En) => include_str!("../prompts/code.en.md"),
        (Code, Zh) => include_str!("../prompts/code.zh.md"),
        (Code, ZhTw) => include_str!("../prompts/code.zh-TW.md"),
        (Code, Ja) => include_str!("../prompts/code.ja.md"),
        (Code, Ko) => include_str!("../prompts/code.ko.md"),
        (Code, Es) => include_str!("../prompts/code.es.md"),
        (Cowork, En) => include_str!("../prompts/cowork.en.md"),
        (Cowork, Zh) => include_str!("../prompts/cowork.zh.md"),
        (Cowork, ZhTw) => include_str!("../prompts/cowork.zh-TW.md"),
        (Cowork, Ja) => include_str!("../prompts/cowork.ja.md"),
        (Cowork, Ko) => include_str!("../prompts/cowork.ko.md"),
        (Cowork, Es) => include_str!("../prompts/cowork.es.md"),
    }
}

/// Facts about where the agent runs, for the environment block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Environment {
    /// Operating system (`linux`, `macos`, ...).
    pub os: String,
    /// Shell used for commands.
    pub shell: String,
    /// Workspace path.
    pub workspace: String,
    /// Git state (branch, dirty) or "not a git repository".
    pub git: String,
    /// Whether commands run in an OS sandbox.
    pub sandbox: String,
    /// Today's date (YYYY-MM-DD).
    pub date: String,
}

/// One loaded project instruction file (AGENTS.md, CLAUDE.md, user-level).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectNote {
    /// Where it came from.
    pub source: String,
    /// Its text.
    pub text: String,
}

/// The full system prompt.
pub fn build_instructions(
    agent: AgentType,
    lang: Lang,
    env: &Environment,
    notes: &[ProjectNote],
) -> String {
    let mut out = String::new();
    for line in template(agent, lang).lines() {
        if line.starts_with("[[") && line.ends_with("]]") {
            if !out.is_empty() {
                out.push('\n');
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    push_context(&mut out, env, notes);
    out
}

/// A user-defined role's system prompt: its own text, then the built-in rules on tools and
/// untrusted content (the `tools` and `safety` sections of the cowork prompt in `lang`), then
/// the environment block and project instructions.
pub fn build_role_instructions(
    role_prompt: &str,
    lang: Lang,
    env: &Environment,
    notes: &[ProjectNote],
) -> String {
    let mut out = role_prompt.trim().to_string();
    out.push('\n');
    for name in ["tools", "safety"] {
        let text = section(AgentType::Cowork, lang, name);
        if !text.is_empty() {
            out.push('\n');
            out.push_str(&text);
            out.push('\n');
        }
    }
    push_context(&mut out, env, notes);
    out
}

/// The text of one `[[section]]` of a prompt template (empty when absent).
pub fn section(agent: AgentType, lang: Lang, name: &str) -> String {
    let marker = format!("[[{name}]]");
    let t = template(agent, lang);
    let Some(start) = t.find(&marker) else {
        return String::new();
    };
    let rest = &t[start + marker.len()..];
    let end = rest.find("\n[[").unwrap_or(rest.len());
    rest[..end].trim().to_string()
}

/// Appends the environment block and the project instructions.
fn push_context(out: &mut String, env: &Environment, notes: &[ProjectNote]) {
    out.push_str("\n# Environment\n");
    for (k, v) in [
        ("OS", &env.os),
        ("Shell", &env.shell),
        ("Workspace", &env.workspace),
        ("Git", &env.git),
        ("Sandbox", &env.sandbox),
        ("Date", &env.date),
    ] {
        if !v.is_empty() {
            out.push_str(&format!("- {k}: {v}\n"));
        }
    }
    if !notes.is_empty() {
        out.push_str(
            "\n# Project instructions\nThe user's instruction files for this project, outermost first (the nearest wins on conflict):\n",
        );
        for n in notes {
            out.push_str(&format!("\n## {}\n{}\n", n.source, n.text.trim()));
        }
    }
}

/// The default instructions (coding agent, English, no environment block details).
pub fn default_instructions() -> String {
    build_instructions(AgentType::Code, Lang::En, &Environment::default(), &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_every_section_in_order() {
        for agent in [AgentType::Code, AgentType::Cowork] {
            for lang in Lang::ALL {
                let t = template(agent, lang);
                let markers: Vec<&str> = t
                    .lines()
                    .filter(|l| l.starts_with("[[") && l.ends_with("]]"))
                    .map(|l| l.trim_start_matches("[[").trim_end_matches("]]"))
                    .collect();
                assert_eq!(markers, SECTIONS, "{agent:?} {}", lang.code());
                for pair in t.split("[[").skip(1) {
                    let body = pair.split_once("]]").map(|(_, b)| b.trim()).unwrap_or("");
                    assert!(
                        !body.is_empty(),
                        "{agent:?} {} has an empty section",
                        lang.code()
                    );
                }
                assert!(
                    t.contains("todo_write") && t.contains("ask_user"),
                    "{agent:?} {}",
                    lang.code()
                );
            }
        }
    }

    #[test]
    fn the_prompt_has_environment_and_project_notes() {
        let env = Environment {
            os: "linux".into(),
            workspace: "/w".into(),
            date: "2026-11-30".into(),
            ..Default::default()
        };
        let notes = [ProjectNote {
            source: "/w/AGENTS.md".into(),
            text: "Use tabs.".into(),
        }];
        let p = build_instructions(AgentType::Code, Lang::Ja, &env, &notes);
        assert!(p.contains("Cairn"));
        assert!(!p.contains("[["));
        assert!(p.contains("- Date: 2026-11-30"));
        assert!(p.contains("## /w/AGENTS.md\nUse tabs."));
        assert_eq!(Lang::parse("zh_TW"), Some(Lang::ZhTw));
        assert_eq!(Lang::parse("xx"), None);
    }
}
