//! Name resolution behind a trait: the system's resolver, or (tests only, set from code) a
//! fixed map with a log of every name asked, so a test proves which names were resolved.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

/// What a name resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The addresses, in the resolver's order.
    pub addrs: Vec<SocketAddr>,
    /// Whether a test mapping gave them (its local addresses are the test's servers, so they
    /// are not refused as local).
    pub mapped: bool,
}

/// Resolves host names.
#[async_trait]
pub trait Resolver: Send + Sync {
    /// The addresses of `host` on `port`.
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Resolution>;
}

/// The system's resolver.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

#[async_trait]
impl Resolver for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Resolution> {
        let addrs = tokio::net::lookup_host((host, port)).await?.collect();
        Ok(Resolution {
            addrs,
            mapped: false,
        })
    }
}

/// A test resolver: names map to fixed addresses; every name asked is logged; a name not in
/// the map fails without any real lookup. Only code builds one (no setting reaches it).
#[derive(Debug, Clone, Default)]
pub struct MapResolver {
    map: HashMap<String, IpAddr>,
    asked: Arc<Mutex<Vec<String>>>,
    log: Option<std::path::PathBuf>,
}

impl MapResolver {
    /// A resolver answering `map` (names in ASCII form).
    pub fn new(map: impl IntoIterator<Item = (String, IpAddr)>) -> Self {
        MapResolver {
            map: map.into_iter().collect(),
            ..Default::default()
        }
    }

    /// Also appends every name asked to `file`, one a line (for a test that watches another
    /// process).
    pub fn logging_to(mut self, file: std::path::PathBuf) -> Self {
        self.log = Some(file);
        self
    }

    /// The names asked so far.
    pub fn asked(&self) -> Vec<String> {
        self.asked.lock().map(|a| a.clone()).unwrap_or_default()
    }
}

#[async_trait]
impl Resolver for MapResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Resolution> {
        if let Ok(mut a) = self.asked.lock() {
            a.push(host.to_string());
        }
        if let Some(file) = &self.log {
            use std::io::Write;
            let line = format!("{host}\n");
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
            {
                let _ = f.write_all(line.as_bytes());
            }
        }
        match self.map.get(host) {
            Some(ip) => Ok(Resolution {
                addrs: vec![SocketAddr::new(*ip, port)],
                mapped: true,
            }),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{host}: not in the test's host map"),
            )),
        }
    }
}
