//! An MCP server's request for information from the user (`elicitation/create`), as the
//! faces see it and answer it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `elicitation_requested`: an MCP server asks the user for information while one of its
/// tools runs for this turn (extension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ElicitationRequested {
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// The tool call it came during.
    #[serde(rename = "reqId")]
    pub req_id: String,
    /// The opaque id a face answers this request by.
    #[serde(rename = "requestId")]
    pub request_id: String,
    /// The server's configured name.
    pub server: String,
    /// What the server says it wants (server text: shown inert).
    pub message: String,
    /// `form`: fields to fill in (`schema`); `url`: a page to visit (`url`).
    pub mode: ElicitationMode,
    /// The requested JSON Schema (an object of flat fields) in form mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "Record<string, unknown>")]
    pub schema: Option<serde_json::Value>,
    /// The page to open in URL mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<String>,
}

/// How a server asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ElicitationMode {
    /// A form of fields.
    Form,
    /// A page the user visits in the browser (a login, a payment).
    Url,
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "action", rename_all = "snake_case")]
#[ts(export)]
pub enum ElicitationAnswer {
    /// The user gave the information (`content`: the form's values; empty in URL mode).
    Accept {
        #[serde(default)]
        #[ts(type = "Record<string, unknown>")]
        content: serde_json::Map<String, serde_json::Value>,
    },
    /// The user said no (or nobody could be asked: `reason` says which).
    Decline {
        #[serde(default)]
        reason: String,
    },
    /// The user dismissed the request.
    Cancel,
}
