//! SOCKS5 (RFC 1928), `CONNECT` only, no authentication; names are decided before they are
//! resolved (`socks5h`).

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::proxy::Opener;

/// Reply codes.
const OK: u8 = 0;
const NOT_ALLOWED: u8 = 2;
const UNSUPPORTED_COMMAND: u8 = 7;
const UNSUPPORTED_ADDRESS: u8 = 8;

/// Serves a SOCKS5 connection whose version byte was read.
pub(crate) async fn serve(mut s: UnixStream, opener: &Opener<'_>) -> std::io::Result<()> {
    let n = s.read_u8().await?;
    let mut methods = vec![0u8; usize::from(n)];
    s.read_exact(&mut methods).await?;
    if !methods.contains(&0) {
        s.write_all(&[5, 0xff]).await?;
        return Ok(());
    }
    s.write_all(&[5, 0]).await?;
    let mut head = [0u8; 4];
    s.read_exact(&mut head).await?;
    let host = match head[3] {
        1 => {
            let mut b = [0u8; 4];
            s.read_exact(&mut b).await?;
            std::net::Ipv4Addr::from(b).to_string()
        }
        3 => {
            let len = s.read_u8().await?;
            let mut b = vec![0u8; usize::from(len)];
            s.read_exact(&mut b).await?;
            String::from_utf8_lossy(&b).into_owned()
        }
        4 => {
            let mut b = [0u8; 16];
            s.read_exact(&mut b).await?;
            std::net::Ipv6Addr::from(b).to_string()
        }
        _ => return reply(&mut s, UNSUPPORTED_ADDRESS).await,
    };
    let port = s.read_u16().await?;
    if head[1] != 1 {
        return reply(&mut s, UNSUPPORTED_COMMAND).await;
    }
    match opener.open(&host, port).await {
        Ok(mut upstream) => {
            reply(&mut s, OK).await?;
            tokio::io::copy_bidirectional(&mut s, &mut upstream).await?;
            Ok(())
        }
        Err(_) => reply(&mut s, NOT_ALLOWED).await,
    }
}

async fn reply(s: &mut UnixStream, code: u8) -> std::io::Result<()> {
    s.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}
