//! Background shell tasks: started by `run_shell {background: true}`, killed with the session.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cairn_engine::ToolError;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::output::{Keep, OutputBuf};
use super::process::{signal_group, Exit, ShellProcess};
use super::run::CANCEL_GRACE;

/// Output kept per background task (the most recent bytes).
pub const TASK_OUTPUT_BYTES: usize = 8 * 1024 * 1024;
/// Background tasks that may run at once in one registry.
pub const MAX_RUNNING_TASKS: usize = 16;

/// Where a background task is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskState {
    /// Still running.
    Running,
    /// Ended on its own.
    Exited(Exit),
    /// Stopped by `shell_task_kill` (or the session ending).
    Killed(Exit),
}

impl TaskState {
    /// A short human/model-readable description.
    pub fn describe(&self) -> String {
        match self {
            TaskState::Running => "running".into(),
            TaskState::Exited(e) => format!("exited {}", e.footer()),
            TaskState::Killed(e) => format!("killed by shell_task_kill {}", e.footer()),
        }
    }
}

/// Identity of a started task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInfo {
    /// Task id handed to the model (`shell-1`, ...).
    pub id: String,
    /// Process id of the task's shell (also its process group id).
    pub pid: u32,
}

/// A snapshot of a task for `shell_task_output`.
#[derive(Debug, Clone)]
pub struct TaskSnapshot {
    /// The command line.
    pub command: String,
    /// Current state.
    pub state: TaskState,
    /// Time since the task started.
    pub elapsed: Duration,
    /// Output so far (the most recent part when it is long).
    pub output: String,
}

struct Task {
    command: String,
    pid: u32,
    started: Instant,
    output: Mutex<OutputBuf>,
    state: watch::Sender<TaskState>,
    kill: CancellationToken,
}

impl Task {
    fn output(&self) -> MutexGuard<'_, OutputBuf> {
        self.output.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The background tasks of one session; dropping it kills every task still running.
#[derive(Default)]
pub struct ShellTasks {
    tasks: Mutex<BTreeMap<u64, Arc<Task>>>,
    next: AtomicU64,
}

impl std::fmt::Debug for ShellTasks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellTasks")
            .field("tasks", &self.lock().len())
            .finish()
    }
}

impl ShellTasks {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<Task>>> {
        self.tasks.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: &str) -> Result<Arc<Task>, ToolError> {
        let tasks = self.lock();
        id.trim()
            .strip_prefix("shell-")
            .and_then(|n| n.parse::<u64>().ok())
            .and_then(|n| tasks.get(&n).cloned())
            .ok_or_else(|| {
                let known: Vec<String> = tasks.keys().map(|n| format!("shell-{n}")).collect();
                let known = if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                };
                ToolError::NotFound(format!("no background task `{id}` (known tasks: {known})"))
            })
    }

    /// Starts `command` in `cwd` as a background task (needs a Tokio runtime), inside the
    /// session's sandbox unless `sandboxed` is false.
    pub fn start(
        &self,
        command: &str,
        cwd: &Path,
        host: &cairn_engine::ToolHost,
        sandboxed: bool,
    ) -> Result<TaskInfo, ToolError> {
        let running = self
            .lock()
            .values()
            .filter(|t| *t.state.borrow() == TaskState::Running)
            .count();
        if running >= MAX_RUNNING_TASKS {
            return Err(ToolError::Failed(format!(
                "{running} background tasks are already running; stop some with shell_task_kill first"
            )));
        }
        let mut proc = ShellProcess::spawn(command, cwd, host, sandboxed)?;
        let pid = proc.pid().unwrap_or(0);
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (state, _) = watch::channel(TaskState::Running);
        let task = Arc::new(Task {
            command: command.to_string(),
            pid,
            started: Instant::now(),
            output: Mutex::new(OutputBuf::new(TASK_OUTPUT_BYTES, Keep::Tail)),
            state,
            kill: CancellationToken::new(),
        });
        self.lock().insert(n, task.clone());
        tokio::spawn(async move {
            let t = task.clone();
            let mut sink = |b: &[u8]| t.output().push(b);
            let killed = proc
                .run_until(&mut sink, false, task.kill.cancelled())
                .await
                .is_some();
            if killed || !proc.drain(&mut sink).await {
                proc.terminate(CANCEL_GRACE, &mut sink).await;
            }
            let exit = proc
                .exit()
                .cloned()
                .unwrap_or_else(|| Exit::Unknown("not reaped".into()));
            drop(proc);
            task.state.send_replace(if killed {
                TaskState::Killed(exit)
            } else {
                TaskState::Exited(exit)
            });
        });
        Ok(TaskInfo {
            id: format!("shell-{n}"),
            pid,
        })
    }

    /// The task's state and output so far.
    pub fn snapshot(&self, id: &str) -> Result<TaskSnapshot, ToolError> {
        let task = self.get(id)?;
        let state = task.state.borrow().clone();
        let output = task.output().to_text();
        Ok(TaskSnapshot {
            command: task.command.clone(),
            state,
            elapsed: task.started.elapsed(),
            output,
        })
    }

    /// Kills the task's process group and waits (briefly) until it is reaped.
    pub async fn kill(&self, id: &str) -> Result<TaskState, ToolError> {
        let task = self.get(id)?;
        let mut rx = task.state.subscribe();
        if *rx.borrow() != TaskState::Running {
            return Ok(rx.borrow().clone());
        }
        task.kill.cancel();
        let waited = tokio::time::timeout(
            Duration::from_secs(5),
            rx.wait_for(|s| *s != TaskState::Running),
        )
        .await;
        match waited {
            Ok(Ok(s)) => Ok(s.clone()),
            _ => Err(ToolError::Failed(format!(
                "task {id} did not stop within 5 s after SIGKILL"
            ))),
        }
    }
}

impl Drop for ShellTasks {
    fn drop(&mut self) {
        for task in self.lock().values() {
            if *task.state.borrow() == TaskState::Running {
                task.kill.cancel();
                if let Ok(pid) = i32::try_from(task.pid) {
                    if pid > 0 {
                        signal_group(Pid::from_raw(pid), Signal::SIGKILL);
                    }
                }
            }
        }
    }
}
