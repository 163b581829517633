//! `cairn run --steer-from PATH`: lines read from a file, a FIFO or stdin (`-`) while the run
//! goes are queued as steering for the running turn. A line is the words (its `@path`
//! mentions attach workspace files, as in a prompt), or a JSON object
//! `{"text": "...", "attach": ["shot.png", ...]}` whose files (images, audio, video; relative
//! to the current directory) go with the words as `--attach` sends them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_runtime::host::{Prompt, SessionHandle};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};

/// One steering message as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SteerLine {
    /// The words.
    pub text: String,
    /// Files that go with them.
    pub attach: Vec<PathBuf>,
}

/// Reads one line: `None` for a blank one, an error for a JSON object that is not
/// `{"text", "attach"?}` with words.
pub fn parse_line(line: &str) -> Option<Result<SteerLine, String>> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    if !line.starts_with('{') {
        return Some(Ok(SteerLine {
            text: line.to_string(),
            attach: Vec::new(),
        }));
    }
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Json {
        text: String,
        #[serde(default)]
        attach: Vec<PathBuf>,
    }
    Some(match serde_json::from_str::<Json>(line) {
        Ok(j) if !j.text.trim().is_empty() => Ok(SteerLine {
            text: j.text.trim().to_string(),
            attach: j.attach,
        }),
        Ok(_) => Err("a steering line needs words (\"text\")".to_string()),
        Err(e) => Err(format!(
            "a steering line that starts with {{ is {{\"text\", \"attach\"}}: {e}"
        )),
    })
}

/// Starts reading `from` (`-` = stdin) in the background; every line is queued for the
/// session's running turn. Stops at the end of the input or when the task is aborted.
pub fn spawn(handle: Arc<SessionHandle>, from: PathBuf) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if from == Path::new("-") {
            read_lines(&handle, BufReader::new(tokio::io::stdin())).await;
            return;
        }
        // A FIFO's open waits for a writer: in the background, never holding the run.
        match tokio::fs::File::open(&from).await {
            Ok(f) => read_lines(&handle, BufReader::new(f)).await,
            Err(e) => errln!("error: --steer-from {}: {e}", from.display()),
        }
    })
}

async fn read_lines<R: AsyncBufRead + Unpin>(handle: &SessionHandle, reader: R) {
    let mut lines = reader.lines();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(l)) => l,
            Ok(None) => return,
            Err(e) => {
                errln!("error: --steer-from: {e}");
                return;
            }
        };
        let parsed = match parse_line(&line) {
            None => continue,
            Some(Err(e)) => {
                errln!("error: steering not queued: {e}");
                continue;
            }
            Some(Ok(p)) => p,
        };
        let files = parsed.attach.len();
        let words = parsed.text.clone();
        let prompt = match Prompt::text(parsed.text).with_files(&parsed.attach) {
            Ok(p) => p,
            Err(e) => {
                errln!("error: steering not queued: {e}");
                continue;
            }
        };
        match handle.steer(prompt).await {
            Ok((_, notes)) => {
                for note in notes {
                    errln!("note: {note}");
                }
                let with = match files {
                    0 => String::new(),
                    n => format!(" (+{n} file(s))"),
                };
                errln!("steering queued: {}{with}", crate::render::inert(&words));
            }
            Err(e) => errln!("error: steering not queued: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_words_or_a_json_object_with_files() {
        assert_eq!(parse_line("   "), None);
        assert_eq!(
            parse_line("also run the tests @src/a.rs"),
            Some(Ok(SteerLine {
                text: "also run the tests @src/a.rs".into(),
                attach: vec![],
            }))
        );
        assert_eq!(
            parse_line(r#"{"text": "look", "attach": ["shot.png"]}"#),
            Some(Ok(SteerLine {
                text: "look".into(),
                attach: vec![PathBuf::from("shot.png")],
            }))
        );
        assert!(matches!(parse_line(r#"{"text": " "}"#), Some(Err(_))));
        assert!(matches!(parse_line(r#"{"txt": "x"}"#), Some(Err(_))));
    }
}
