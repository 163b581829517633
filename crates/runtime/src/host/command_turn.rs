//! What a command file's turn gets beyond its text, decided once for every face: its
//! `` !`cmd` `` lines run before the prompt is sent and `allowed-tools` grant tools for that
//! turn, from a project command only once the workspace trust covers its file
//! ([`crate::hooks::project_files_trusted`]) and never when it shadows a user command; its
//! `model` (Claude Code's `sonnet|opus|haiku` on an Anthropic session, else an id as given)
//! is the turn's.

use cairn_engine::{ShellLine, TurnOptions};
use cairn_policy::{RuleDecision, RuleSet, RuleSpec};

use super::submit::SubmitNote;
use super::SessionHandle;
use crate::commands::extras::shell_lines;
use crate::commands::Extras;
use crate::skills::SkillSource;

/// The turn options of command `name` whose prompt is `text`, the text with the lines that
/// will not run said as such, and what the user should hear.
pub(super) fn command_turn(
    handle: &SessionHandle,
    name: &str,
    text: String,
    extras: &Extras,
) -> (String, TurnOptions, Vec<SubmitNote>) {
    let mut options = TurnOptions::default();
    let mut notes = Vec::new();
    let mut note = |n: String| {
        notes.push(SubmitNote::Command {
            command: name.to_string(),
            note: n,
        })
    };
    let lines = shell_lines(&text);
    let project = extras.source == Some(SkillSource::Project);
    let runnable = !lines.is_empty() || !extras.allowed_tools.is_empty();
    let trusted = !project
        || !runnable
        || handle
            .config()
            .project_trusted(|| crate::hooks::project_files_trusted(handle.workspace()));
    let mut text = text;
    if trusted {
        options.shell = lines
            .into_iter()
            .map(|(raw, command)| ShellLine { raw, command })
            .collect();
    } else {
        for (raw, command) in &lines {
            text = text.replacen(
                raw,
                &format!("[`{command}` was not run: the workspace is not trusted]"),
                1,
            );
        }
        note(format!(
            "its `!` lines and allowed-tools are off: the repository's command runs them only \
             once you trust the workspace (`cairn hooks trust -w {}`, or Trust in the app's \
             Settings)",
            handle.workspace().display()
        ));
    }
    if trusted && !extras.allowed_tools.is_empty() {
        if extras.shadows_user {
            note("allowed-tools is not honoured: a command of yours has this name".into());
        } else {
            options.grants = grants(name, extras, &mut note);
        }
    }
    if let Some(model) = extras.model.as_deref() {
        match turn_model(model, &handle.provider()) {
            Ok(m) => options.model = m,
            Err(why) => note(why),
        }
    }
    (text, options, notes)
}

/// `allowed-tools` as allow rules for the turn (Claude Code's names become every Cairn tool
/// that does the same, as its project rules do); what cannot be kept is said.
fn grants(name: &str, extras: &Extras, note: &mut impl FnMut(String)) -> RuleSet {
    let mut rules = RuleSet::new();
    let source = format!("allowed-tools of /{name} ({})", extras.path.display());
    for tool in &extras.allowed_tools {
        let texts = match crate::claude_rules::translate(tool) {
            Ok(t) => t,
            Err(why) => {
                note(format!("allowed-tools: {why}; not granted"));
                continue;
            }
        };
        for rule in texts {
            let spec = RuleSpec {
                rule,
                decision: RuleDecision::Allow,
                matches: Vec::new(),
                not_match: Vec::new(),
                project: None,
            };
            if let Err(e) = rules.add_spec(&spec, &source) {
                note(format!("allowed-tools: `{tool}`: {e}; not granted"));
            }
        }
    }
    rules
}

/// The model a command's `model` names on a session of `provider`: `inherit` is the
/// session's (`None`); Claude Code's aliases name Anthropic's models, kept on an Anthropic
/// session and otherwise not followed (said); any other id as given.
pub(crate) fn turn_model(model: &str, provider: &str) -> Result<Option<String>, String> {
    match model {
        "" | "inherit" => Ok(None),
        "sonnet" | "opus" | "haiku" if provider == "anthropic" => {
            Ok(Some(crate::agents::claude_alias(model).to_string()))
        }
        "sonnet" | "opus" | "haiku" => Err(format!(
            "model `{model}` is Anthropic's; the turn runs on the session's model"
        )),
        id => Ok(Some(id.to_string())),
    }
}
