//! How a run ends: one `run`/`retry`/`resume` of a session, with the steering turns it went
//! on with.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::event::TurnStatus;

/// How a run ended, as the engine reports it once its event stream is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum RunEnd {
    /// Turns ran; `status` is the last one's.
    Ended {
        /// How the last turn ended.
        status: TurnStatus,
        /// Turns the run held (1 + `steering_turns`).
        turns: u32,
        /// Turns started from steering left over when the turn before ended.
        #[serde(rename = "steeringTurns")]
        steering_turns: u32,
    },
    /// No turn ran: nothing to retry or resume.
    NotStarted,
}

impl RunEnd {
    /// The last turn's status; `None` when no turn ran.
    pub fn status(&self) -> Option<TurnStatus> {
        match self {
            RunEnd::Ended { status, .. } => Some(*status),
            RunEnd::NotStarted => None,
        }
    }
}
