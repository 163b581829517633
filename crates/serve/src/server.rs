//! Starting and stopping the server: options checked, token and listener set up, one
//! connection task per client (headers at most 16 KiB, complete within 30 s), the idle
//! close, and the shutdown (SIGTERM / SIGINT) that ends runs cleanly within 10 s.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use crate::config::{default_socket, parse_listen, ApprovePolicy, Listen, ServeConfig, ServeError};
use crate::listen::{bind, Acceptor};
use crate::state::App;

/// Request line and headers: at most this many bytes.
const MAX_HEAD: usize = 16 * 1024;
/// Request line and headers: complete within this.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// The whole shutdown.
const SHUTDOWN: Duration = Duration::from_secs(10);
/// How often idle sessions are looked for.
const IDLE_SWEEP: Duration = Duration::from_secs(5);

/// The connection a request came on (closed at once when its stream's reader is cut off).
#[derive(Clone)]
pub struct Conn {
    /// Cancelled to drop the connection.
    pub cancel: CancellationToken,
}

/// A started server.
pub struct Running {
    /// `unix:<path>` or `<host>:<port>`.
    pub listen: String,
    /// The token file (`None`: none used).
    pub token_file: Option<PathBuf>,
    /// The bearer token.
    pub token: String,
    stop: CancellationToken,
    done: tokio::task::JoinHandle<()>,
    app: Arc<App>,
}

impl Running {
    /// The one line printed on stdout once listening.
    pub fn start_line(&self) -> String {
        serde_json::json!({
            "listen": self.listen,
            "tokenFile": self.token_file.as_ref().map(|p| p.display().to_string()),
            "pid": std::process::id(),
            "version": env!("CARGO_PKG_VERSION"),
        })
        .to_string()
    }

    /// Stops: no new connections or runs, runs interrupted (their streams still get
    /// `interrupted`, `turn_end`, `run_end`), queues dropped, requests denied, sessions saved
    /// and closed, the socket removed.
    pub async fn shutdown(self) {
        self.stop.cancel();
        if tokio::time::timeout(SHUTDOWN, self.done).await.is_err() {
            tracing::warn!("the shutdown took longer than {SHUTDOWN:?}");
        }
    }

    /// Sessions open right now (benches, tests).
    pub fn open_sessions(&self) -> usize {
        self.app.lives_all().len()
    }
}

fn check(cfg: &ServeConfig, listen: &Listen) -> Result<(), ServeError> {
    let usage = |m: &str| Err(ServeError::Usage(m.to_string()));
    if cfg.tenants.is_some() {
        if cfg.token_file.is_some() || cfg.state_dir.is_some() {
            return usage("--tenants takes neither --token-file nor --state-dir");
        }
        if cfg
            .sandbox
            .is_some_and(|m| m != cairn_policy::sandbox::SandboxMode::Required)
        {
            return usage("--tenants needs the sandbox: only --sandbox required");
        }
        if cfg.approve == ApprovePolicy::Allow {
            return usage("--approve allow is never for tenants");
        }
    }
    let secs = cfg.approval_timeout.as_secs();
    if !(1..=86_400).contains(&secs) {
        return usage("--approval-timeout is 1 to 86400 seconds");
    }
    if cfg.approve == ApprovePolicy::Allow && !matches!(listen, Listen::Unix(_)) {
        return usage("--approve allow is only for a unix: socket");
    }
    if cfg.max_sessions == 0 || cfg.max_turns == Some(0) {
        return usage("--max-sessions and --max-turns are at least 1");
    }
    for o in &cfg.allow_origins {
        let ok = (o.starts_with("http://") || o.starts_with("https://"))
            && !o.trim_end_matches('/').contains(['?', '#'])
            && o.split("://")
                .nth(1)
                .is_some_and(|h| !h.is_empty() && !h.contains('/'));
        if !ok {
            return Err(ServeError::Usage(format!(
                "--allow-origin {o}: use an exact scheme://host[:port]"
            )));
        }
    }
    Ok(())
}

/// Starts the server: checks the options, binds, and serves until [`Running::shutdown`].
pub async fn start(cfg: ServeConfig) -> Result<Running, ServeError> {
    let listen = match &cfg.listen {
        Some(s) => parse_listen(s)?,
        None => Listen::Unix(default_socket()),
    };
    check(&cfg, &listen)?;
    let tenants = match &cfg.tenants {
        Some(file) => {
            let tenants = crate::tenants::load(file)?;
            for t in &tenants {
                // Tenants require a working allow-list sandbox.
                cairn_runtime::sandbox_report(
                    &t.root,
                    &t.state_dir,
                    Some(cairn_policy::sandbox::SandboxMode::Required),
                )
                .map_err(|e| {
                    ServeError::Usage(format!("--tenants needs a working sandbox: {e}"))
                })?;
            }
            tenants
        }
        None => Vec::new(),
    };
    let (token_file, token) = if tenants.is_empty() {
        let token_file = cfg.token_file.clone().unwrap_or_else(|| {
            default_socket()
                .parent()
                .map(|p| p.join("serve.token"))
                .unwrap_or_else(|| PathBuf::from("serve.token"))
        });
        let token = crate::token::load_or_create(&token_file)?;
        (Some(token_file), token)
    } else {
        (None, String::new())
    };
    let state_dir = cfg
        .state_dir
        .clone()
        .unwrap_or_else(cairn_runtime::default_state_dir);
    if tenants.is_empty() {
        std::fs::create_dir_all(&state_dir).map_err(|e| {
            ServeError::Usage(format!("cannot create {}: {e}", state_dir.display()))
        })?;
    }
    let bound = bind(&listen).await?;
    let mut app = App::new(cfg, state_dir, token.clone(), bound.port);
    app.tenants = tenants;
    let app = Arc::new(app);
    let router = crate::routes::router(app.clone());
    let stop = CancellationToken::new();
    let mut conns = JoinSet::new();
    let mut accepts = JoinSet::new();
    let (conn_tx, mut conn_rx) = tokio::sync::mpsc::unbounded_channel();
    for acceptor in bound.acceptors {
        accepts.spawn(accept_loop(acceptor, stop.clone(), conn_tx.clone()));
    }
    drop(conn_tx);
    let idle = tokio::spawn(idle_sweep(app.clone()));
    let socket = bound.socket.clone();
    let app2 = app.clone();
    let stop2 = stop.clone();
    let done = tokio::spawn(async move {
        let conn_stop = CancellationToken::new();
        loop {
            tokio::select! {
                got = conn_rx.recv() => match got {
                    Some(io) => {
                        conns.spawn(serve_conn(io, router.clone(), conn_stop.clone()));
                    }
                    None => break,
                },
                _ = stop2.cancelled() => break,
            }
        }
        accepts.abort_all();
        idle.abort();
        app2.stopping.cancel();
        app2.close_all().await;
        app2.host.shutdown().await;
        conn_stop.cancel();
        while conns.join_next().await.is_some() {}
        if let Some(path) = socket {
            let _ = std::fs::remove_file(path);
        }
    });
    Ok(Running {
        listen: bound.display,
        token_file,
        token,
        stop,
        done,
        app,
    })
}

/// One accepted connection, either kind.
pub enum Io {
    /// A unix socket.
    Unix(tokio::net::UnixStream),
    /// TCP.
    Tcp(tokio::net::TcpStream),
}

async fn accept_loop(
    acceptor: Acceptor,
    stop: CancellationToken,
    out: tokio::sync::mpsc::UnboundedSender<Io>,
) {
    loop {
        let got = tokio::select! {
            g = accept(&acceptor) => g,
            _ = stop.cancelled() => return,
        };
        match got {
            Ok(io) => {
                if out.send(io).is_err() {
                    return;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn accept(acceptor: &Acceptor) -> std::io::Result<Io> {
    match acceptor {
        Acceptor::Unix(l) => l.accept().await.map(|(s, _)| Io::Unix(s)),
        Acceptor::Tcp(l) => l.accept().await.map(|(s, _)| {
            let _ = s.set_nodelay(true);
            Io::Tcp(s)
        }),
    }
}

async fn serve_conn(io: Io, router: axum::Router, stop: CancellationToken) {
    match io {
        Io::Unix(s) => serve_io(s, router, stop).await,
        Io::Tcp(s) => serve_io(s, router, stop).await,
    }
}

async fn serve_io<S>(io: S, router: axum::Router, stop: CancellationToken)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let conn = Conn {
        cancel: CancellationToken::new(),
    };
    let cut = conn.cancel.clone();
    let svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        req.extensions_mut().insert(conn.clone());
        let mut r = router.clone();
        async move { r.call(req.map(axum::body::Body::new)).await }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .max_buf_size(MAX_HEAD);
    let served = builder.serve_connection(TokioIo::new(io), svc);
    tokio::pin!(served);
    tokio::select! {
        r = served.as_mut() => {
            if let Err(e) = r {
                tracing::debug!(error = %e, "connection ended");
            }
        }
        _ = cut.cancelled() => tracing::info!("a slow reader was cut off"),
        _ = stop.cancelled() => {
            served.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(2), served).await;
        }
    }
}

async fn idle_sweep(app: Arc<App>) {
    let idle = app.cfg.idle_close;
    let every = IDLE_SWEEP.min(idle);
    loop {
        tokio::time::sleep(every).await;
        for live in app.lives_all() {
            if live.idle_for(idle) {
                tracing::info!(session = %live.id(), "closing an idle session");
                if let Err(e) = app.close(&live.id()).await {
                    tracing::warn!(error = %e.message, "closing an idle session");
                }
            }
        }
    }
}

/// `cairn serve`: starts, prints the start line, serves until SIGTERM / SIGINT.
pub async fn run(cfg: ServeConfig) -> Result<(), ServeError> {
    use tokio::signal::unix::{signal, SignalKind};
    let (mut int, mut term) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(i), Ok(t)) => (i, t),
        _ => return Err(ServeError::Failed("cannot install signal handlers".into())),
    };
    let running = start(cfg).await?;
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", running.start_line());
        let _ = out.flush();
    }
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
    tracing::info!("shutting down");
    running.shutdown().await;
    Ok(())
}
