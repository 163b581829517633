//! Session naming: one cheap LLM request after the first turn (seed `genSessionNamePrompt`),
//! in the session's language. Failure changes nothing; a name the user gave always wins.

use std::sync::Arc;

use cairn_engine::prompt::Lang;
use cairn_engine::{LlmClient, LlmRequest};
use cairn_protocol::Message;
use tokio_util::sync::CancellationToken;

/// Whether sessions name themselves with a model request (`CAIRN_SESSION_NAMING=off`: no;
/// they are named after their first message instead).
pub fn enabled(env: &crate::llm_setup::EnvFn) -> bool {
    !env("CAIRN_SESSION_NAMING").is_some_and(|v| crate::user_config::switched_off(&v))
}

/// The naming instruction in a language.
pub fn naming_prompt(lang: Lang) -> &'static str {
    match lang {
        Lang::Zh => "用不超过 12 个字为这段对话起一个简短的标题。只输出标题,不要引号和标点结尾。",
        Lang::ZhTw => "用不超過 12 個字為這段對話取一個簡短的標題。只輸出標題,不要引號與句尾標點。",
        Lang::Ja => "この会話に 20 文字以内の短いタイトルを付けてください。タイトルだけを出力し、引用符や句点は付けないでください。",
        Lang::Ko => "이 대화에 20자 이내의 짧은 제목을 붙이세요. 제목만 출력하고 따옴표나 마침표는 쓰지 마세요.",
        Lang::Es => "Pon a esta conversación un título breve de como máximo 6 palabras. Responde solo con el título, sin comillas ni punto final.",
        Lang::En => "Give this conversation a short title of at most 6 words. Reply with the title only, no quotes, no final period.",
    }
}

/// The longest a naming request may take.
pub const NAMING_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Asks the model for a title; `None` on any failure or an unusable answer (or none within
/// [`NAMING_WITHIN`]), with what the request used (counted against the spending cap).
pub async fn generate_name(
    llm: Arc<dyn LlmClient>,
    model: &str,
    first_input: &str,
    lang: Lang,
) -> (Option<String>, Option<cairn_protocol::TokenUsage>) {
    let excerpt: String = first_input.chars().take(2_000).collect();
    let request = LlmRequest {
        model: model.to_string(),
        messages: vec![Message::system(naming_prompt(lang)), Message::user(excerpt)],
        tools: Vec::new(),
        // No effort is sent: the model's default (a local model may reject the field).
        reasoning_effort: None,
        req_id: format!(
            "{}{}",
            cairn_engine::llm::NAMING_REQ_PREFIX,
            uuid::Uuid::new_v4()
        ),
    };
    let cancel = CancellationToken::new();
    // Faces wait for the name before a turn's last event: a slow model costs at most this,
    // then the first message names the session.
    let answer = tokio::time::timeout(
        NAMING_WITHIN,
        cairn_engine::llm::answer_text_and_usage(llm.stream(request, cancel.clone())),
    )
    .await;
    cancel.cancel();
    let Ok((text, usage)) = answer else {
        return (None, None);
    };
    (text.ok().and_then(|t| sanitize_name(&t)), usage)
}

/// One line, no quotes or trailing punctuation, at most 60 chars; `None` when empty.
pub fn sanitize_name(raw: &str) -> Option<String> {
    let line = raw.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut trimmed = line;
    loop {
        let next = trimmed
            .trim_start_matches(['#', '*', '-', ' '])
            .trim_matches(|c: char| matches!(c, '"' | '\'' | '“' | '”' | '「' | '」' | '`' | '*'))
            .trim_end_matches(['.', '。', '!', '！', ' '])
            .trim();
        if next == trimmed {
            break;
        }
        trimmed = next;
    }
    let lower = trimmed.to_lowercase();
    let trimmed = if lower.starts_with("title:") {
        trimmed[6..].trim()
    } else {
        trimmed
    };
    if trimmed.is_empty() {
        return None;
    }
    let mut name: String = trimmed.chars().take(60).collect();
    if trimmed.chars().count() > 60 {
        name.push('…');
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_engine::testing::{FakeLlm, FakeReply};
    use cairn_engine::{LlmOutcome, OutcomeStatus};

    #[test]
    fn names_are_cleaned() {
        assert_eq!(
            sanitize_name("\"Fix the parser.\"\n").as_deref(),
            Some("Fix the parser")
        );
        assert_eq!(
            sanitize_name("Title: Port to Rust").as_deref(),
            Some("Port to Rust")
        );
        assert_eq!(
            sanitize_name("「修复解析器」。").as_deref(),
            Some("修复解析器")
        );
        assert_eq!(sanitize_name("  \n "), None);
    }

    #[tokio::test]
    async fn a_name_is_generated_in_the_session_language_and_failure_is_none() {
        let llm = FakeLlm::new(vec![
            FakeReply::text("**Parser refactor**"),
            FakeReply::outcome(LlmOutcome::new(OutcomeStatus::Auth, None)),
        ]);
        llm.script_naming();
        let (name, _) = generate_name(
            Arc::new(llm.clone()),
            "m",
            "please refactor the parser",
            Lang::Zh,
        )
        .await;
        assert_eq!(name.as_deref(), Some("Parser refactor"));
        assert_eq!(
            llm.requests()[0].messages[0].text(),
            naming_prompt(Lang::Zh)
        );
        assert!(llm.requests()[0].tools.is_empty());
        let (none, _) = generate_name(Arc::new(llm), "m", "x", Lang::En).await;
        assert_eq!(none, None);
    }

    #[test]
    fn the_test_kits_mock_knows_every_languages_naming_request() {
        for lang in [Lang::En, Lang::Zh, Lang::ZhTw, Lang::Ja, Lang::Ko, Lang::Es] {
            let prompt = naming_prompt(lang);
            assert!(
                cairn_testkit::naming::MARKERS
                    .iter()
                    .any(|m| prompt.contains(m)),
                "no marker of the mock matches {prompt}"
            );
        }
    }
}
