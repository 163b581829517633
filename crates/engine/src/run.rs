//! One run of a session: the turn asked for, then every steering message still queued when
//! a turn ends, each starting a turn of its own in the same event stream (never after an
//! interrupted turn: its leftovers wait for the next run).

use std::sync::Arc;

use cairn_protocol::{Event, RunEnd, TurnStatus};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::locks::lock;
use crate::state::Inner;
use crate::turn::{TurnKind, TurnRunner};

/// Runs `kind` (with `options`, for it alone) and the steering turns after it, holding the conversation throughout (a turn
/// queued behind this run waits for all of them); returns how the run ended.
pub(crate) async fn drive(
    inner: &Arc<Inner>,
    kind: TurnKind,
    options: crate::turn_options::TurnOptions,
    tx: mpsc::Sender<Event>,
    cancel: CancellationToken,
) -> RunEnd {
    let mut state = inner.state.lock().await;
    let nothing_to_do = match kind {
        TurnKind::Retry => !state.retry_pending,
        TurnKind::Resume => state.pending.is_empty(),
        TurnKind::Input(_) | TurnKind::Attach(..) | TurnKind::Steering(..) => false,
        TurnKind::Compact => state.messages.len() < 3,
    };
    if nothing_to_do {
        return RunEnd::NotStarted;
    }
    let mut status = TurnRunner::new(inner, &mut state, tx.clone(), cancel.clone())
        .with_options(options)
        .run(kind)
        .await;
    let mut steering_turns = 0;
    while status != TurnStatus::Interrupted && !cancel.is_cancelled() {
        // The first leftover starts the turn; the others are injected before its first call.
        let Some(next) = lock(&inner.steering).pop_front() else {
            break;
        };
        steering_turns += 1;
        status = TurnRunner::new(inner, &mut state, tx.clone(), cancel.clone())
            .run(TurnKind::Steering(next.text, next.attached))
            .await;
    }
    RunEnd::Ended {
        status,
        turns: 1 + steering_turns,
        steering_turns,
    }
}
