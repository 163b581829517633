//! `grep`: regex search over the workspace with ripgrep's rules.

use std::path::Path;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::engine::{self, GrepError, GrepReport, GrepRequest};
use crate::args;
use crate::paths::{self, Access};

/// Matching lines returned when the call gives no `max_results`.
pub const DEFAULT_MAX_RESULTS: u64 = 100;
/// Largest `max_results` accepted (larger values are clamped).
pub const MAX_RESULTS: u64 = 2000;

/// Searches file contents with a regular expression.
#[derive(Debug, Default, Clone, Copy)]
pub struct Grep;

#[derive(Debug, Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    ignore_case: Option<bool>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    max_results: Option<u64>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    include_hidden: Option<bool>,
}

#[async_trait]
impl Tool for Grep {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Search
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "grep".into(),
            description: "Search file contents with a regular expression (ripgrep syntax and \
                rules: .gitignore/.ignore respected, hidden and binary files skipped). Returns \
                `path:line:text` for each matching line, files sorted by path, and says how many \
                matches were left out when the result is capped. Use it to find definitions, \
                usages and strings instead of reading files one by one."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": "Regular expression, e.g. `fn\\s+main` or `TODO`. Escape regex metacharacters to search for them literally."
                    },
                    "path": {
                        "type": "string",
                        "description": "File or directory to search, relative to the workspace root. Default \".\"."
                    },
                    "glob": {
                        "type": "string",
                        "description": "Only search files matching this glob, e.g. `*.rs`, `src/**/*.{ts,tsx}`; several globs separated by commas or spaces; prefix `!` to exclude, e.g. `!*.min.js`."
                    },
                    "ignore_case": {
                        "type": "boolean",
                        "description": "Case-insensitive search. Default false."
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "description": "Maximum matching lines returned. Default 100, maximum 2000."
                    },
                    "include_hidden": {
                        "type": "boolean",
                        "description": "Also search hidden files and directories (dotfiles). Default false."
                    }
                },
                "required": ["pattern"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::read_only("search")
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::reads_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("grep", args)?;
        if args.pattern.is_empty() {
            return Err(ToolError::InvalidArguments(
                "grep: pattern must not be empty".into(),
            ));
        }
        if args.max_results == Some(0) {
            return Err(ToolError::InvalidArguments(
                "grep: max_results must be at least 1".into(),
            ));
        }
        let max = args
            .max_results
            .unwrap_or(DEFAULT_MAX_RESULTS)
            .min(MAX_RESULTS) as usize;
        let path = args
            .path
            .clone()
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| ".".into());
        let cancel = ctx.cancel.clone();
        let denials = ctx.host.read_denials();
        tokio::task::spawn_blocking(move || {
            let target = paths::resolve_for(&ctx, &path, Access::Read)?;
            if let Some(rule) = denials.denied(&target.abs) {
                return Err(ToolError::Failed(format!(
                    "grep: `{path}` is denied by rule `{}` ({})",
                    rule.text, rule.source
                )));
            }
            match std::fs::metadata(&target.abs) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(ToolError::NotFound(format!(
                        "{path} (no such file or directory)"
                    )))
                }
                Err(e) => return Err(ToolError::io(format!("cannot search {path}"), e)),
            }
            let req = GrepRequest {
                pattern: args.pattern.clone(),
                root: target.abs.clone(),
                globs: args
                    .glob
                    .as_deref()
                    .map(engine::split_globs)
                    .unwrap_or_default(),
                ignore_case: args.ignore_case.unwrap_or(false),
                include_hidden: args.include_hidden.unwrap_or(false),
                threads: 0,
                denials,
            };
            let report = engine::search(&req, &cancel).map_err(|e| match e {
                GrepError::Cancelled => ToolError::Interrupted,
                e @ (GrepError::BadPattern { .. } | GrepError::BadGlob { .. }) => {
                    ToolError::InvalidArguments(format!("grep: {e}"))
                }
            })?;
            let ws = std::fs::canonicalize(&ctx.workspace).unwrap_or(ctx.workspace.clone());
            Ok(ToolOutput::text(format_report(
                &report, &ws, &req, &path, max,
            )))
        })
        .await
        .map_err(|e| ToolError::Failed(format!("grep task failed: {e}")))?
    }
}

/// `path:line:text` lines, then a footer saying what was left out.
fn format_report(
    report: &GrepReport,
    workspace: &Path,
    req: &GrepRequest,
    shown: &str,
    max: usize,
) -> String {
    let mut text = report_text(report, workspace, req, shown, max);
    if let Some(note) = &report.denied_note {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(note);
        text.push('\n');
    }
    text
}

/// The matches and the footer saying what was left out (binary, unreadable, capped).
fn report_text(
    report: &GrepReport,
    workspace: &Path,
    req: &GrepRequest,
    shown: &str,
    max: usize,
) -> String {
    if report.files.is_empty() {
        let mut msg = format!("No matches for `{}` in `{shown}`", req.pattern);
        if !req.globs.is_empty() {
            msg.push_str(&format!(" (files matching {})", req.globs.join(" ")));
        }
        msg.push('.');
        if report.binary_skipped > 0 {
            msg.push_str(&format!(
                " {} binary file(s) were skipped.",
                report.binary_skipped
            ));
        }
        if report.unreadable > 0 {
            msg.push_str(&format!(
                " {} file(s) could not be read.",
                report.unreadable
            ));
        }
        return msg;
    }
    let mut out = String::new();
    let mut shown_lines = 0usize;
    'files: for f in &report.files {
        let rel = f.path.strip_prefix(workspace).unwrap_or(&f.path);
        let rel = rel.to_string_lossy();
        for l in &f.lines {
            if shown_lines >= max {
                break 'files;
            }
            out.push_str(&format!("{rel}:{}:{}\n", l.line, l.text));
            shown_lines += 1;
        }
    }
    let total_files = report.files.len();
    if (shown_lines as u64) < report.total_lines {
        let raise = if (max as u64) < MAX_RESULTS {
            format!(", or raise max_results (up to {MAX_RESULTS})")
        } else {
            String::new()
        };
        out.push_str(&format!(
            "[showing {shown_lines} of {} matching lines in {total_files} files; {} more lines \
             not shown. Narrow the pattern, path or glob{raise}.]\n",
            report.total_lines,
            report.total_lines - shown_lines as u64
        ));
    } else {
        out.push_str(&format!(
            "[{} matching lines in {total_files} files]\n",
            report.total_lines
        ));
    }
    out
}
