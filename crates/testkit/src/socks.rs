//! A minimal SOCKS5 proxy (no authentication, `CONNECT` only) on 127.0.0.1, for testing
//! that clients really go through `SOCKS5_PROXY`. It only connects to loopback targets.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A running SOCKS5 proxy; stops when dropped.
pub struct Socks5Proxy {
    addr: SocketAddr,
    connects: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Socks5Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Socks5Proxy")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Socks5Proxy {
    /// Starts the proxy on an ephemeral port.
    pub async fn start() -> std::io::Result<Socks5Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let connects = Arc::new(AtomicUsize::new(0));
        let counter = connects.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let counter = counter.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(sock, &counter).await {
                        eprintln!("mock SOCKS5 proxy: {e}");
                    }
                });
            }
        });
        Ok(Socks5Proxy {
            addr,
            connects,
            task,
        })
    }

    /// `socks5h://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("socks5h://{}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many `CONNECT`s were relayed so far.
    pub fn connects(&self) -> usize {
        self.connects.load(Ordering::SeqCst)
    }
}

impl Drop for Socks5Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn bad(msg: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.to_string())
}

/// Reads the target of a `CONNECT` request (after the version/command bytes).
async fn target(sock: &mut TcpStream) -> std::io::Result<SocketAddr> {
    let mut head = [0u8; 4];
    sock.read_exact(&mut head).await?;
    if head[0] != 5 || head[1] != 1 {
        return Err(bad("only SOCKS5 CONNECT is supported"));
    }
    let ip = match head[3] {
        1 => {
            let mut b = [0u8; 4];
            sock.read_exact(&mut b).await?;
            IpAddr::V4(Ipv4Addr::from(b))
        }
        4 => {
            let mut b = [0u8; 16];
            sock.read_exact(&mut b).await?;
            IpAddr::V6(Ipv6Addr::from(b))
        }
        3 => {
            let len = sock.read_u8().await?;
            let mut name = vec![0u8; usize::from(len)];
            sock.read_exact(&mut name).await?;
            match String::from_utf8_lossy(&name).as_ref() {
                "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
                other => other.parse().map_err(|_| bad("unresolvable host"))?,
            }
        }
        _ => return Err(bad("unknown address type")),
    };
    let port = sock.read_u16().await?;
    Ok(SocketAddr::new(ip, port))
}

async fn serve(mut sock: TcpStream, connects: &AtomicUsize) -> std::io::Result<()> {
    let mut greeting = [0u8; 2];
    sock.read_exact(&mut greeting).await?;
    let mut methods = vec![0u8; usize::from(greeting[1])];
    sock.read_exact(&mut methods).await?;
    if greeting[0] != 5 || !methods.contains(&0) {
        sock.write_all(&[5, 0xff]).await?;
        return Err(bad("client offered no 'no authentication' method"));
    }
    sock.write_all(&[5, 0]).await?;
    let to = target(&mut sock).await?;
    if !to.ip().is_loopback() {
        sock.write_all(&[5, 2, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
        return Err(bad("the mock proxy only connects to loopback addresses"));
    }
    let mut upstream = match TcpStream::connect(to).await {
        Ok(u) => u,
        Err(e) => {
            sock.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
            return Err(e);
        }
    };
    connects.fetch_add(1, Ordering::SeqCst);
    sock.write_all(&[5, 0, 0, 1, 127, 0, 0, 1, 0, 0]).await?;
    tokio::io::copy_bidirectional(&mut sock, &mut upstream).await?;
    Ok(())
}
