//! The per-command proxy: a unix socket listener serving HTTP (`CONNECT` and plain
//! forwarding) and SOCKS5, deciding each host before it is resolved.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::{TcpStream, UnixListener, UnixStream};

use crate::gate::{NetGate, Verdict};
use crate::resolve::Resolver;

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// No async runtime to run it on.
    #[error("the network proxy needs a running async runtime")]
    NoRuntime,
    /// The socket could not be made.
    #[error("cannot listen on {path}: {source}")]
    Listen {
        /// The socket's path.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
}

/// A running proxy; dropping it stops the listener (connections already open run on until
/// either side closes) and removes the socket.
#[derive(Debug)]
pub struct ProxyHandle {
    task: tokio::task::JoinHandle<()>,
    socket: PathBuf,
}

impl ProxyHandle {
    /// The socket it listens on.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Starts a proxy on a new unix socket at `socket` (its folder must exist, private to
/// Cairn) on the current tokio runtime.
pub fn start(
    socket: &Path,
    gate: Arc<dyn NetGate>,
    resolver: Arc<dyn Resolver>,
) -> Result<ProxyHandle, ProxyError> {
    let rt = tokio::runtime::Handle::try_current().map_err(|_| ProxyError::NoRuntime)?;
    let _ = std::fs::remove_file(socket);
    let listener = {
        let _enter = rt.enter();
        UnixListener::bind(socket).map_err(|source| ProxyError::Listen {
            path: socket.display().to_string(),
            source,
        })?
    };
    let task = rt.spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (gate, resolver) = (gate.clone(), resolver.clone());
            tokio::spawn(async move {
                if let Err(e) = serve(stream, gate, resolver).await {
                    tracing::debug!("network proxy connection: {e}");
                }
            });
        }
    });
    Ok(ProxyHandle {
        task,
        socket: socket.to_path_buf(),
    })
}

/// Serves one connection: SOCKS5 when it starts with version byte 5, HTTP otherwise.
async fn serve(
    mut stream: UnixStream,
    gate: Arc<dyn NetGate>,
    resolver: Arc<dyn Resolver>,
) -> std::io::Result<()> {
    let first = stream.read_u8().await?;
    let opener = Opener {
        gate: gate.as_ref(),
        resolver: resolver.as_ref(),
    };
    if first == 5 {
        crate::socks::serve(stream, &opener).await
    } else {
        crate::http::serve(stream, first, &opener).await
    }
}

/// How long a connection to an allowed host may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Opens connections to the hosts a gate allows.
pub(crate) struct Opener<'a> {
    gate: &'a dyn NetGate,
    resolver: &'a dyn Resolver,
}

impl Opener<'_> {
    /// Decides on `raw_host` (as the command named it) and connects; a refusal says why
    /// (naming the host and port) and is told to the gate. A name is resolved only once the
    /// gate allowed it.
    pub(crate) async fn open(&self, raw_host: &str, port: u16) -> Result<TcpStream, String> {
        let result = self.open_inner(raw_host, port).await;
        if let Err(why) = &result {
            let shown = cairn_policy::net_rules::ascii_host(raw_host)
                .unwrap_or_else(|| raw_host.escape_default().to_string());
            self.gate.refused(&shown, port, why);
        }
        result
    }

    async fn open_inner(&self, raw_host: &str, port: u16) -> Result<TcpStream, String> {
        let host = cairn_policy::net_rules::ascii_host(raw_host)
            .ok_or_else(|| format!("`{}` is not a host name", raw_host.escape_default()))?;
        if let Ok(ip) = host.parse::<IpAddr>() {
            if cairn_policy::net::local_ip(ip) && !self.gate.names_address(ip) {
                return Err(format!("{host}:{port}: {}", local_refusal(&host, ip)));
            }
            if let Verdict::Refuse(why) = self.gate.decide(&host, port).await {
                return Err(why);
            }
            return connect(&[SocketAddr::new(ip, port)], &host, port).await;
        }
        if let Verdict::Refuse(why) = self.gate.decide(&host, port).await {
            return Err(why);
        }
        let resolution = self
            .resolver
            .resolve(&host, port)
            .await
            .map_err(|e| format!("{host}:{port}: {host} could not be resolved: {e}"))?;
        let mut refused_local = None;
        let addrs: Vec<SocketAddr> = resolution
            .addrs
            .iter()
            .copied()
            .filter(|a| {
                let ok = resolution.mapped
                    || !cairn_policy::net::local_ip(a.ip())
                    || self.gate.names_address(a.ip());
                if !ok {
                    refused_local = Some(a.ip());
                }
                ok
            })
            .collect();
        if addrs.is_empty() {
            return Err(match refused_local {
                Some(ip) => format!("{host}:{port}: {}", local_refusal(&host, ip)),
                None => format!("{host}:{port}: {host} has no address"),
            });
        }
        connect(&addrs, &host, port).await
    }
}

fn local_refusal(host: &str, ip: IpAddr) -> String {
    let what = if host == ip.to_string() {
        ip.to_string()
    } else {
        format!("{host} is {ip}, which")
    };
    format!(
        "{what} is an address on this machine or its network (loopback, private, \
         link-local or a cloud metadata service): refused unless a rule names the address, \
         `Network({ip})`"
    )
}

async fn connect(addrs: &[SocketAddr], host: &str, port: u16) -> Result<TcpStream, String> {
    let mut last = None;
    for a in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(a)).await {
            Ok(Ok(s)) => return Ok(s),
            Ok(Err(e)) => last = Some(e.to_string()),
            Err(_) => last = Some("timed out".into()),
        }
    }
    Err(format!(
        "{host}:{port} is allowed but could not be reached: {}",
        last.unwrap_or_default()
    ))
}
