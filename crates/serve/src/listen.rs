//! Binding the listener: a unix socket (`0600` in a `0700` folder of the user's) or loopback
//! TCP.

use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::{Listen, ServeError};

/// A bound listener.
pub enum Acceptor {
    /// A unix socket.
    Unix(tokio::net::UnixListener),
    /// A TCP socket.
    Tcp(tokio::net::TcpListener),
}

/// What was bound.
pub struct Bound {
    /// The listeners (two for `localhost`).
    pub acceptors: Vec<Acceptor>,
    /// What the start line prints under `listen`.
    pub display: String,
    /// The port, on TCP (for the `Host` check).
    pub port: Option<u16>,
    /// The socket file, removed at shutdown.
    pub socket: Option<PathBuf>,
}

/// Binds `listen`.
pub async fn bind(listen: &Listen) -> Result<Bound, ServeError> {
    match listen {
        Listen::Unix(path) => bind_unix(path),
        Listen::Tcp { addrs, port } => bind_tcp(addrs, *port).await,
    }
}

fn bind_unix(path: &Path) -> Result<Bound, ServeError> {
    let usage = |m: String| ServeError::Usage(m);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if dir.exists() {
        let meta = std::fs::metadata(dir).map_err(|e| usage(format!("{}: {e}", dir.display())))?;
        let me = nix::unistd::getuid().as_raw();
        if meta.uid() != me || meta.mode() & 0o077 != 0 {
            return Err(usage(format!(
                "the socket's folder {} must be yours and closed to others (chmod 700)",
                dir.display()
            )));
        }
    } else {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| usage(format!("cannot create {}: {e}", dir.display())))?;
    }
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(usage(format!(
                "{} is in use by a running server",
                path.display()
            )));
        }
        std::fs::remove_file(path)
            .map_err(|e| usage(format!("cannot replace stale {}: {e}", path.display())))?;
    }
    let listener = tokio::net::UnixListener::bind(path)
        .map_err(|e| usage(format!("cannot listen on {}: {e}", path.display())))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| ServeError::Failed(format!("chmod {}: {e}", path.display())))?;
    Ok(Bound {
        acceptors: vec![Acceptor::Unix(listener)],
        display: format!("unix:{}", path.display()),
        port: None,
        socket: Some(path.to_path_buf()),
    })
}

async fn bind_tcp(addrs: &[IpAddr], port: u16) -> Result<Bound, ServeError> {
    let mut acceptors = Vec::new();
    let mut bound_port = port;
    for (i, ip) in addrs.iter().enumerate() {
        let addr = SocketAddr::new(*ip, bound_port);
        match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => {
                if let Ok(local) = l.local_addr() {
                    bound_port = local.port();
                }
                acceptors.push(Acceptor::Tcp(l));
            }
            // `localhost`: ::1 only where available.
            Err(e) if i > 0 => tracing::info!(%addr, error = %e, "not listening there"),
            Err(e) => return Err(ServeError::Usage(format!("cannot listen on {addr}: {e}"))),
        }
    }
    let host = match addrs {
        [IpAddr::V4(v4)] => v4.to_string(),
        [IpAddr::V6(v6)] => format!("[{v6}]"),
        _ => "localhost".to_string(),
    };
    Ok(Bound {
        acceptors,
        display: format!("{host}:{bound_port}"),
        port: Some(bound_port),
        socket: None,
    })
}
