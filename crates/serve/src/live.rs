//! One session open in the server: its handle, its run queue (runs never overlap, post
//! order, at most 16 waiting), its event hub and the requests it waits on.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use cairn_protocol::Event;
use cairn_runtime::host::{Pending, SessionHandle};
use serde_json::{json, Value};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::error::ApiError;
use crate::hub::{Hub, Outlet};

/// Messages that may wait behind a run.
pub const MAX_QUEUED: usize = 16;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A file attached to a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attachment {
    /// A file inside the workspace.
    Path(String),
    /// Inline bytes.
    Inline {
        /// `image/png`, …
        media_type: String,
        /// The bytes, base64.
        base64: String,
    },
}

/// What a posted message asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// What a user types, with attachments.
    Text(String, Vec<Attachment>),
    /// Re-run the last turn after a retriable error.
    Retry,
    /// Finish the tool calls left open when a process stopped.
    Resume,
}

/// A message waiting for its run.
pub struct Queued {
    /// The run's number in the session.
    pub id: u64,
    /// What to run.
    pub input: Input,
    /// The attached client's stream (`None`: detached).
    pub outlet: Option<Outlet>,
}

/// The run under way.
struct Current {
    id: u64,
    cancel: CancellationToken,
}

#[derive(Default)]
struct Queue {
    items: VecDeque<Queued>,
    current: Option<Current>,
    next: u64,
}

/// A request the session's turn asked (seen on its event stream).
#[derive(Debug, Clone)]
struct Asked {
    request_id: String,
    kind: &'static str,
    data: Value,
    asked_at: chrono::DateTime<chrono::Utc>,
}

/// One open session.
pub struct Live {
    /// The session.
    pub handle: Arc<SessionHandle>,
    /// Where its requests wait.
    pub pending: Arc<Pending>,
    /// Its events.
    pub hub: Hub,
    /// How long requests wait.
    pub timeout: Duration,
    queue: Mutex<Queue>,
    wake: Notify,
    /// Told when a run ended.
    ended: Notify,
    asked: Mutex<Vec<Asked>>,
    last_active: Mutex<Instant>,
    /// Cancelled when the session closes.
    pub closed: CancellationToken,
    /// `GET …/events` streams open.
    pub watchers: AtomicUsize,
    /// Steering instructions given here, by `steerId`.
    steers: Mutex<Vec<(String, String)>>,
    /// The tenant it belongs to (`None`: single-user mode).
    pub tenant: Option<String>,
}

impl Live {
    /// A live session around `handle`.
    pub fn new(
        handle: Arc<SessionHandle>,
        pending: Arc<Pending>,
        epoch: &str,
        timeout: Duration,
        tenant: Option<String>,
    ) -> Live {
        Live {
            handle,
            pending,
            hub: Hub::new(epoch),
            timeout,
            queue: Mutex::default(),
            wake: Notify::new(),
            ended: Notify::new(),
            asked: Mutex::default(),
            last_active: Mutex::new(Instant::now()),
            closed: CancellationToken::new(),
            watchers: AtomicUsize::new(0),
            steers: Mutex::default(),
            tenant,
        }
    }

    /// The session id.
    pub fn id(&self) -> String {
        self.handle.id()
    }

    /// Marks the session used now (for the idle close).
    pub fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    /// Queues a message; returns its run id and how many runs are ahead of it (the running
    /// one included). `429 queue_full` past [`MAX_QUEUED`].
    pub fn enqueue(&self, input: Input, outlet: Option<Outlet>) -> Result<(u64, usize), ApiError> {
        let mut q = lock(&self.queue);
        if q.items.len() >= MAX_QUEUED {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "queue_full",
                format!("{MAX_QUEUED} messages already wait in this session"),
            ));
        }
        q.next += 1;
        let id = q.next;
        let ahead = q.items.len() + usize::from(q.current.is_some());
        q.items.push_back(Queued { id, input, outlet });
        drop(q);
        self.touch();
        self.wake.notify_one();
        Ok((id, ahead))
    }

    /// The next message to run, once there is one; `None` when the session closed.
    pub async fn next(&self) -> Option<(Queued, CancellationToken)> {
        loop {
            let notified = self.wake.notified();
            {
                let mut q = lock(&self.queue);
                if self.closed.is_cancelled() {
                    return None;
                }
                if let Some(item) = q.items.pop_front() {
                    let cancel = CancellationToken::new();
                    q.current = Some(Current {
                        id: item.id,
                        cancel: cancel.clone(),
                    });
                    return Some((item, cancel));
                }
            }
            tokio::select! {
                _ = notified => {}
                _ = self.closed.cancelled() => return None,
            }
        }
    }

    /// The run under way ended.
    pub fn finished(&self) {
        lock(&self.queue).current = None;
        self.touch();
        self.ended.notify_waiters();
    }

    /// Waits until no run is under way (its `run_end` sent).
    pub async fn runs_ended(&self) {
        loop {
            let ended = self.ended.notified();
            if lock(&self.queue).current.is_none() {
                return;
            }
            ended.await;
        }
    }

    /// The client of run `id` went away: its queued message is dropped, its running run
    /// interrupted.
    pub fn client_gone(&self, id: u64) {
        let mut q = lock(&self.queue);
        if q.current.as_ref().is_some_and(|c| c.id == id) {
            if let Some(c) = &q.current {
                c.cancel.cancel();
            }
            drop(q);
            tracing::info!(session = %self.id(), run = id, "client gone: interrupting its run");
            self.handle.interrupt();
            return;
        }
        q.items.retain(|i| i.id != id);
    }

    /// Interrupts the run under way (and with `drop_queued` drops the waiting messages,
    /// whose streams get `run_end` `not_started`); returns whether a run was interrupted and
    /// how many messages were dropped.
    pub fn interrupt(&self, drop_queued: bool) -> (bool, usize) {
        let mut q = lock(&self.queue);
        let dropped: Vec<Queued> = if drop_queued {
            q.items.drain(..).collect()
        } else {
            Vec::new()
        };
        let running = q.current.as_ref().map(|c| c.cancel.clone());
        drop(q);
        let interrupted = running.is_some() || self.handle.is_busy();
        if let Some(c) = running {
            c.cancel();
        }
        self.handle.interrupt();
        for d in &dropped {
            self.not_started(d);
        }
        (interrupted, dropped.len())
    }

    /// Ends a dropped message's stream with `run_end` `not_started`.
    pub fn not_started(&self, q: &Queued) {
        let data = json!({"type": "run_end", "data": {"kind": "not_started"}}).to_string();
        let frame = self.hub.publish("run_end", &data);
        if let Some(o) = &q.outlet {
            o.send(frame.text.clone());
        }
    }

    /// Drops everything queued (closing, shutting down).
    pub fn drop_queue(&self) -> usize {
        self.interrupt(true).1
    }

    /// Messages waiting behind the run.
    pub fn queued(&self) -> usize {
        lock(&self.queue).items.len()
    }

    /// Whether a run is under way or queued.
    pub fn busy(&self) -> bool {
        let q = lock(&self.queue);
        q.current.is_some() || !q.items.is_empty()
    }

    /// Records the requests a turn asks (from its events).
    pub fn observe(&self, event: &Event) {
        let (request_id, kind, data) = match event {
            Event::PermissionRequired(p) => (p.request_id.clone(), "approval", json!(p)),
            Event::AskUserQuestion(q) => (q.request_id.clone(), "question", json!(q)),
            Event::PlanProposed(p) => (p.request_id.clone(), "plan", json!(p)),
            Event::DirectoryRequested(d) => (d.request_id.clone(), "directory", json!(d)),
            Event::ElicitationRequested(r) => (r.request_id.clone(), "elicitation", json!(r)),
            // A subagent's requests wait in the parent's table: answerable the same way.
            Event::SubagentEvent(sub) => return self.observe(&sub.event),
            _ => return,
        };
        let mut asked = lock(&self.asked);
        let live = self.pending.pending_request_ids();
        asked.retain(|a| live.contains(&a.request_id));
        asked.push(Asked {
            request_id,
            kind,
            data,
            asked_at: chrono::Utc::now(),
        });
    }

    /// What waits now: `(approvals, questions)` as the routes list them.
    pub fn waiting(&self) -> (Vec<Value>, Vec<Value>) {
        let live = self.pending.pending_request_ids();
        let asked = lock(&self.asked);
        let timeout = chrono::Duration::from_std(self.timeout).unwrap_or(chrono::Duration::MAX);
        let mut approvals = Vec::new();
        let mut questions = Vec::new();
        for a in asked.iter().filter(|a| live.contains(&a.request_id)) {
            let mut v = a.data.clone();
            if let Value::Object(m) = &mut v {
                let at = |t: chrono::DateTime<chrono::Utc>| {
                    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                };
                m.insert("requestId".into(), json!(a.request_id));
                m.insert("askedAt".into(), json!(at(a.asked_at)));
                m.insert(
                    "expiresAt".into(),
                    json!(at(a
                        .asked_at
                        .checked_add_signed(timeout)
                        .unwrap_or(a.asked_at))),
                );
                if a.kind != "approval" {
                    m.insert("kind".into(), json!(a.kind));
                }
            }
            if a.kind == "approval" {
                approvals.push(v);
            } else {
                questions.push(v);
            }
        }
        (approvals, questions)
    }

    /// The kind of a waiting request (`approval`, `question`, `plan`, `directory`).
    pub fn kind_of(&self, request_id: &str) -> Option<&'static str> {
        if !self
            .pending
            .pending_request_ids()
            .iter()
            .any(|r| r == request_id)
        {
            return None;
        }
        lock(&self.asked)
            .iter()
            .find(|a| a.request_id == request_id)
            .map(|a| a.kind)
    }

    /// The state the session view shows: `running`, `waiting` or `idle`.
    pub fn state(&self) -> &'static str {
        let w = self.pending.waiting();
        if w.approvals + w.questions + w.plans + w.directories > 0 {
            "waiting"
        } else if self.busy() || self.handle.is_busy() {
            "running"
        } else {
            "idle"
        }
    }

    /// Whether nothing uses the session (no run, queue, request or stream) since `idle`.
    pub fn idle_for(&self, idle: Duration) -> bool {
        !self.busy()
            && !self.handle.is_active()
            && self.watchers.load(Ordering::SeqCst) == 0
            && self.pending.pending_request_ids().is_empty()
            && lock(&self.last_active).elapsed() >= idle
    }

    /// Queues a steering instruction for the running turn (`prompt`: `text` with its
    /// attachments); returns what waits.
    pub async fn steer(
        &self,
        prompt: cairn_runtime::host::Prompt,
    ) -> Result<Vec<Value>, cairn_runtime::host::SubmitError> {
        let id = format!("st_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        let text = prompt.words().unwrap_or_default().to_string();
        let (_, notes) = self.handle.steer(prompt).await?;
        for note in notes {
            tracing::info!(%note, "sent with the steering");
        }
        lock(&self.steers).push((id, text));
        Ok(self.steering())
    }

    /// Withdraws instruction `steer_id`; whether it was still waiting, and what waits.
    pub fn unsteer(&self, steer_id: &str) -> (bool, Vec<Value>) {
        let text = lock(&self.steers)
            .iter()
            .find(|(id, _)| id == steer_id)
            .map(|(_, t)| t.clone());
        let removed = text.is_some_and(|t| self.handle.remove_steering(&t));
        if removed {
            lock(&self.steers).retain(|(id, _)| id != steer_id);
        }
        (removed, self.steering())
    }

    /// The instructions waiting for the running turn, `{"steerId", "text"}` each.
    pub fn steering(&self) -> Vec<Value> {
        let mut waiting = self.handle.pending_steering();
        let mut steers = lock(&self.steers);
        // Those injected (or withdrawn elsewhere) are forgotten.
        let mut kept = Vec::new();
        for (id, text) in steers.drain(..) {
            if let Some(i) = waiting.iter().position(|w| *w == text) {
                waiting.remove(i);
                kept.push((id, text));
            }
        }
        *steers = kept;
        steers
            .iter()
            .map(|(id, text)| json!({"steerId": id, "text": text}))
            .collect()
    }

    /// The `alwaysAllow` a waiting approval offers (`None`: none).
    pub fn always_allow(&self, request_id: &str) -> Option<Value> {
        lock(&self.asked)
            .iter()
            .find(|a| a.request_id == request_id)
            .and_then(|a| a.data.get("alwaysAllow").cloned())
            .filter(|v| !v.is_null())
    }
}
