//! Web tools: `web_fetch` (a page as markdown) and `web_search` (behind [`SearchBackend`]).
//! What they return is marked as untrusted content. `web_fetch` refuses to reach this machine or
//! its local network through a name or a redirect unless its URL itself named a local address.

mod client;
mod convert;
mod fetch;
mod follow;
mod resolve;
mod search;

pub use client::{HttpConfig, WebError};
pub use convert::{html_to_markdown, untrusted};
pub use fetch::{WebFetch, WebFetchConfig, DEFAULT_MAX_CHARS, MAX_CHARS};
pub use resolve::{is_local_ip, Resolver, SystemResolver};
pub use search::{
    web_search_tool, BraveBackend, SearchBackend, SearchHit, SearchProvider, SearxngBackend,
    TavilyBackend, WebSearch, WebSearchConfig,
};
