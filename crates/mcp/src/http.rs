//! Streamable HTTP transport (rmcp's reqwest client) with configured headers.

use std::collections::{BTreeMap, HashMap};

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;

use crate::ServerError;

/// Builds the transport; header problems (already reported at config load) are errors here.
/// `bearer`: the access token of a login, sent as `Authorization: Bearer …`.
pub fn streamable_http(
    url: &str,
    headers: &BTreeMap<String, String>,
    bearer: Option<&str>,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, ServerError> {
    let map = header_map(headers)?;
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(map);
    if let Some(t) = bearer {
        config = config.auth_header(t.to_string());
    }
    // rmcp's default client: same-origin redirects only, no idle pooling stalls.
    Ok(StreamableHttpClientTransport::from_config(config))
}

/// Parses header names and values.
pub fn header_map(
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, ServerError> {
    let mut map = HashMap::new();
    for (k, v) in headers {
        let name = HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
            ServerError::Transport(format!("header `{k}` is not a valid header name"))
        })?;
        let mut value = HeaderValue::from_str(v)
            .map_err(|_| ServerError::Transport(format!("header `{k}` has an invalid value")))?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    Ok(map)
}
