//! A long session written as events (no model involved): the fixture of the history, search
//! and long-session E2E tests. Each turn is a prompt, an answer (of one of three heights)
//! and its end; one chosen turn carries a word no other turn has, to search for.

use cairn_protocol::{AssistantMessage, Event, TokenUsage, TurnEnd, TurnStart, TurnStatus};

/// The prompt of turn `n` (from 1), to find it on screen.
pub fn prompt(n: u32) -> String {
    format!("Step {n}: tidy the module of stage {n}")
}

/// The answer of turn `n`; turn `rare_at` also mentions `rare`.
pub fn answer(n: u32, rare_at: u32, rare: &str) -> String {
    let extra = if n == rare_at {
        format!(" The {rare} case is handled here.")
    } else {
        String::new()
    };
    // Answers of different heights, as a real session's are: a view kept by row offsets
    // must hold while rows measured on arrival differ from the list's estimate.
    let more = match n % 4 {
        0 => "\n\n- imports sorted\n- dead code removed\n- tests pass\n- docs updated",
        2 => "\n\n```\ncargo test -p stage\n```\n\nAll green.",
        _ => "",
    };
    format!("Stage {n} is tidy: its imports are sorted and its tests pass.{extra}{more}")
}

/// The events of a `turns`-turn session `session` (prompt, answer, end per turn), turn
/// `rare_at`'s answer holding the word `rare`.
pub fn events(session: &str, turns: u32, rare_at: u32, rare: &str) -> Vec<Event> {
    let usage = Some(TokenUsage {
        input_tokens: 900,
        output_tokens: 60,
        ..TokenUsage::default()
    });
    (1..=turns)
        .flat_map(|n| {
            let task = format!("long-{n}");
            [
                Event::TurnStart(TurnStart {
                    task_id: task.clone(),
                    input: prompt(n),
                    attachment_count: None,
                    attachments: None,
                    session_id: session.to_string(),
                    turn: n,
                    source: Default::default(),
                    worktree: None,
                    sandbox: None,
                }),
                Event::AssistantMessage(AssistantMessage {
                    text: answer(n, rare_at, rare),
                    reasoning: String::new(),
                    tool_calls: Vec::new(),
                    usage,
                    cost_usd: None,
                    req_id: format!("{task}-r1"),
                    task_id: task.clone(),
                    log_time: "2026-12-01T10:00:00.000Z".to_string(),
                }),
                Event::TurnEnd(TurnEnd {
                    status: TurnStatus::Completed,
                    iterations: 1,
                    produced_files: Vec::new(),
                    task_id: task,
                    usage,
                    cost_usd: None,
                }),
            ]
        })
        .collect()
}
