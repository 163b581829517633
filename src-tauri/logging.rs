//! Tracing to a daily-rotated log file in the state dir (`logs/cairn-app.YYYY-MM-DD.log`,
//! the last 7 kept), written off the UI thread; warnings also go to stderr.

use std::path::{Path, PathBuf};

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Log files kept.
const KEEP_FILES: usize = 7;
/// Lines queued for the log writer thread before new ones are dropped. The queue's slots are
/// allocated up front: tracing-appender's default (128,000 lines) holds 4 MiB for the life of
/// the app; a few thousand lines is many seconds of the busiest logging Cairn does.
const QUEUED_LINES: usize = 4_096;

/// The log directory inside a state dir.
pub fn log_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("logs")
}

/// Starts logging; keep the guard alive for the life of the app (it flushes on drop).
/// The file level follows `CAIRN_LOG` (default `info`). Returns `None` (and logs to stderr
/// only) when the directory cannot be used.
pub fn init(state_dir: &Path) -> Option<WorkerGuard> {
    let dir = log_dir(state_dir);
    let appender = std::fs::create_dir_all(&dir).ok().and_then(|_| {
        RollingFileAppender::builder()
            .rotation(Rotation::DAILY)
            .filename_prefix("cairn-app")
            .filename_suffix("log")
            .max_log_files(KEEP_FILES)
            .build(&dir)
            .ok()
    });
    let stderr = || {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_filter(EnvFilter::new("warn"))
            .boxed()
    };
    let Some(appender) = appender else {
        let _ = tracing_subscriber::registry().with(stderr()).try_init();
        tracing::warn!(dir = %dir.display(), "cannot write log files; logging to stderr only");
        return None;
    };
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(QUEUED_LINES)
        .finish(appender);
    let filter = EnvFilter::try_from_env("CAIRN_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let file = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .with_writer(writer)
        .with_filter(filter)
        .boxed();
    let _ = tracing_subscriber::registry()
        .with(vec![file, stderr()])
        .try_init();
    Some(guard)
}
