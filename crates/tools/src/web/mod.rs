//! Web tools: `web_fetch` (a page as markdown) and `web_search` (behind [`SearchBackend`]).
//! What they return is marked as untrusted content.

mod client;
mod convert;
mod fetch;
mod search;

pub use client::{HttpConfig, WebError};
pub use convert::{html_to_markdown, untrusted};
pub use fetch::{WebFetch, WebFetchConfig, DEFAULT_MAX_CHARS, MAX_CHARS};
pub use search::{
    web_search_tool, BraveBackend, SearchBackend, SearchHit, SearchProvider, SearxngBackend,
    TavilyBackend, WebSearch, WebSearchConfig,
};
