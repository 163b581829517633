//! Forwards a run's events to a face, batching text deltas so a fast stream does not
//! flood it: consecutive `assistant_delta`, `reasoning_delta` or `tool_output`
//! events of one request are merged and sent at most once per batching window, and any
//! other event flushes the batch first, so order is kept. A run may hold several turns (the
//! engine goes on with leftover steering): forwarding lasts until the stream ends, which is
//! when the engine has let go of the session.

use std::time::Duration;

use cairn_protocol::Event;
use futures::{Stream, StreamExt};
use tokio::time::Instant;

/// Default batching window: about two frames.
pub const BATCH_WINDOW: Duration = Duration::from_millis(32);

/// How forwarding ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForwardEnd {
    /// The page stopped taking events; the caller should cancel the run.
    ChannelClosed,
    /// Every event was forwarded and the stream ended.
    StreamEnded,
}

/// Merges `next` into `pending` when both are the same kind of delta for the same request.
fn merge(pending: &mut Event, next: &Event) -> bool {
    match (pending, next) {
        (Event::AssistantDelta(a), Event::AssistantDelta(b))
        | (Event::ReasoningDelta(a), Event::ReasoningDelta(b))
            if a.req_id == b.req_id && a.task_id == b.task_id =>
        {
            a.text.push_str(&b.text);
            true
        }
        (Event::ToolOutput(a), Event::ToolOutput(b))
            if a.req_id == b.req_id && a.task_id == b.task_id =>
        {
            a.text.push_str(&b.text);
            true
        }
        _ => false,
    }
}

fn is_batchable(e: &Event) -> bool {
    matches!(
        e,
        Event::AssistantDelta(_) | Event::ReasoningDelta(_) | Event::ToolOutput(_)
    )
}

/// Forwards `stream` to `send` with deltas batched over `window`; `observe` sees every
/// event as the engine produced it (before merging). Stops at the end of the stream, or when
/// `send` fails.
pub async fn forward<S, F, O, E>(
    mut stream: S,
    window: Duration,
    mut send: F,
    mut observe: O,
) -> ForwardEnd
where
    S: Stream<Item = Event> + Unpin,
    F: FnMut(Event) -> Result<(), E>,
    O: FnMut(&Event),
{
    let mut pending: Option<Event> = None;
    let mut deadline = Instant::now();
    loop {
        let next = if pending.is_some() {
            tokio::select! {
                biased;
                e = stream.next() => Some(e),
                _ = tokio::time::sleep_until(deadline) => None,
            }
        } else {
            Some(stream.next().await)
        };
        let event = match next {
            // The window passed: flush what accumulated.
            None => {
                if let Some(p) = pending.take() {
                    if send(p).is_err() {
                        return ForwardEnd::ChannelClosed;
                    }
                }
                continue;
            }
            Some(None) => {
                if let Some(p) = pending.take() {
                    if send(p).is_err() {
                        return ForwardEnd::ChannelClosed;
                    }
                }
                return ForwardEnd::StreamEnded;
            }
            Some(Some(e)) => e,
        };
        observe(&event);
        if is_batchable(&event) {
            let merged = pending.as_mut().is_some_and(|p| merge(p, &event));
            if !merged {
                if let Some(p) = pending.take() {
                    if send(p).is_err() {
                        return ForwardEnd::ChannelClosed;
                    }
                }
                pending = Some(event);
                deadline = Instant::now() + window;
            }
            continue;
        }
        if let Some(p) = pending.take() {
            if send(p).is_err() {
                return ForwardEnd::ChannelClosed;
            }
        }
        if send(event).is_err() {
            return ForwardEnd::ChannelClosed;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_protocol::{IterationEnd, TextDelta};
    use futures::stream;

    fn delta(text: &str, req: &str) -> Event {
        Event::AssistantDelta(TextDelta {
            text: text.into(),
            req_id: req.into(),
            task_id: "t".into(),
        })
    }

    fn end() -> Event {
        // Built from JSON so fields added to the protocol later do not break the test.
        serde_json::from_value(serde_json::json!({"type": "turn_end", "data": {
            "status": "completed", "iterations": 1, "produced_files": [], "taskId": "t"}}))
        .unwrap()
    }

    #[tokio::test]
    async fn a_burst_of_deltas_becomes_one_event_and_order_is_kept() {
        let events = vec![
            delta("a", "r1"),
            delta("b", "r1"),
            delta("c", "r2"),
            Event::IterationEnd(IterationEnd {
                iteration: 1,
                task_id: "t".into(),
            }),
            delta("d", "r2"),
            end(),
        ];
        let mut out = Vec::new();
        let mut seen = 0;
        let r = forward(
            stream::iter(events),
            BATCH_WINDOW,
            |e| {
                out.push(e);
                Ok::<(), ()>(())
            },
            |_| seen += 1,
        )
        .await;
        assert_eq!(r, ForwardEnd::StreamEnded);
        assert_eq!(seen, 6);
        let shown: Vec<String> = out
            .iter()
            .map(|e| match e {
                Event::AssistantDelta(d) => format!("{}:{}", d.req_id, d.text),
                other => other.type_name().to_string(),
            })
            .collect();
        assert_eq!(
            shown,
            ["r1:ab", "r2:c", "iteration_end", "r2:d", "turn_end"]
        );
    }

    #[tokio::test]
    async fn an_idle_stream_is_flushed_when_the_window_passes() {
        let (tx, rx) = tokio::sync::mpsc::channel(8);
        let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = sent.clone();
        // Both deltas are queued before the forwarder runs, so they merge.
        tx.send(delta("x", "r")).await.unwrap();
        tx.send(delta("y", "r")).await.unwrap();
        let task = tokio::spawn(async move {
            forward(
                tokio_stream_from(rx),
                Duration::from_millis(30),
                move |e| {
                    if let Event::AssistantDelta(d) = &e {
                        sink.lock().unwrap().push(d.text.clone());
                    }
                    Ok::<(), ()>(())
                },
                |_| {},
            )
            .await
        });
        // The stream stays open and silent: only the batching timer can flush.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while sent.lock().unwrap().is_empty() {
            assert!(std::time::Instant::now() < deadline, "never flushed");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(*sent.lock().unwrap(), ["xy"]);
        tx.send(delta("z", "r")).await.unwrap();
        drop(tx);
        assert_eq!(task.await.unwrap(), ForwardEnd::StreamEnded);
        assert_eq!(*sent.lock().unwrap(), ["xy", "z"]);
    }

    #[tokio::test]
    async fn a_failing_sink_reports_a_closed_channel() {
        let r = forward(
            stream::iter(vec![delta("a", "r"), end()]),
            BATCH_WINDOW,
            |_| Err("gone".to_string()),
            |_| {},
        )
        .await;
        assert_eq!(r, ForwardEnd::ChannelClosed);
    }

    #[tokio::test]
    async fn a_run_of_two_turns_is_forwarded_to_the_end_of_its_stream() {
        let events = vec![end(), delta("more", "r3"), end()];
        let mut ends = 0;
        let r = forward(
            stream::iter(events),
            BATCH_WINDOW,
            |e| {
                ends += usize::from(matches!(e, Event::TurnEnd(_)));
                Ok::<(), ()>(())
            },
            |_| {},
        )
        .await;
        assert_eq!(r, ForwardEnd::StreamEnded);
        assert_eq!(
            ends, 2,
            "the steering turn after the first turn_end is forwarded too"
        );
    }

    fn tokio_stream_from(
        rx: tokio::sync::mpsc::Receiver<Event>,
    ) -> impl Stream<Item = Event> + Unpin {
        Box::pin(futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|e| (e, rx))
        }))
    }
}
