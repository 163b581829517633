//! What an endpoint serves: `GET {base}/models` (OpenAI and Anthropic shapes), the cheap
//! request that both lists models for a picker and tests a connection and its key.

use std::time::Duration;

use crate::anthropic::ANTHROPIC_VERSION;
use crate::classify::display_base;
use crate::factory::ProviderSpec;
use crate::presets::ClientType;
use crate::redact::Redactor;

/// Longest wait for the listing (connect + answer).
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes of a listing read.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// Why an endpoint could not be listed, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The settings cannot make a request (no base URL, a bad URL).
    #[error("{0}")]
    Config(String),
    /// Nothing answered at the address.
    #[error("cannot connect to {base}: {reason}")]
    Unreachable {
        /// The endpoint, credentials removed.
        base: String,
        /// What the network said.
        reason: String,
    },
    /// The server refused the key.
    #[error("{base} refused the API key (HTTP {status}): check the key, or set one if the server needs it")]
    Auth {
        /// The endpoint.
        base: String,
        /// The HTTP status.
        status: u16,
    },
    /// The server answered with another error.
    #[error("{base}/models answered HTTP {status}{hint}")]
    Status {
        /// The endpoint.
        base: String,
        /// The HTTP status.
        status: u16,
        /// A hint for common cases (404: the base URL).
        hint: String,
    },
    /// The answer is not a model list (a web page, another API).
    #[error("{base}/models did not answer with a model list ({what}): is the base URL the API's (it usually ends in /v1)?")]
    NotAnApi {
        /// The endpoint.
        base: String,
        /// What came back instead.
        what: String,
    },
}

/// The model ids the endpoint of `spec` serves, sorted; errors say what failed (network,
/// key, address). One GET request, bounded by [`CHECK_TIMEOUT`].
pub async fn list_models(spec: &ProviderSpec) -> Result<Vec<String>, EndpointError> {
    let r = spec
        .resolve()
        .map_err(|e| EndpointError::Config(e.to_string()))?;
    let base = r.base_url.trim().trim_end_matches('/').to_string();
    let shown = display_base(&base);
    let url = reqwest::Url::parse(&format!("{base}/models")).map_err(|e| {
        EndpointError::Config(format!(
            "the base URL is not a full URL ({e}): write it with its scheme, e.g. http://127.0.0.1:8000/v1"
        ))
    })?;
    let key = spec
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty());
    let redactor = Redactor::new(key);
    let http = crate::http::with_shared_tls(reqwest::Client::builder())
        .connect_timeout(CHECK_TIMEOUT)
        .timeout(CHECK_TIMEOUT)
        .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| EndpointError::Config(format!("cannot build the HTTP client: {e}")))?;
    let mut req = http.get(url);
    for (k, v) in &spec.extra_headers {
        req = req.header(k.as_str(), v.as_str());
    }
    req = match (key, r.client_type) {
        (Some(k), ClientType::Anthropic) => req
            .header("x-api-key", k)
            .header("anthropic-version", ANTHROPIC_VERSION),
        (None, ClientType::Anthropic) => req.header("anthropic-version", ANTHROPIC_VERSION),
        (Some(k), _) => req.bearer_auth(k),
        (None, _) => req,
    };
    let resp = req.send().await.map_err(|e| EndpointError::Unreachable {
        base: shown.clone(),
        reason: redactor.scrub(&network_reason(&e)),
    })?;
    let status = resp.status().as_u16();
    if status == 401 || status == 403 {
        return Err(EndpointError::Auth {
            base: shown,
            status,
        });
    }
    if !resp.status().is_success() {
        let hint = match status {
            404 => ": is the base URL right (it usually ends in /v1)?".to_string(),
            _ => String::new(),
        };
        return Err(EndpointError::Status {
            base: shown,
            status,
            hint,
        });
    }
    let mut body = Vec::new();
    let mut resp = resp;
    while let Some(chunk) = resp.chunk().await.map_err(|e| EndpointError::Unreachable {
        base: shown.clone(),
        reason: redactor.scrub(&network_reason(&e)),
    })? {
        body.extend_from_slice(&chunk);
        if body.len() > MAX_BODY {
            return Err(EndpointError::NotAnApi {
                base: shown,
                what: "an answer over 4 MB".into(),
            });
        }
    }
    parse_models(&body).ok_or_else(|| EndpointError::NotAnApi {
        base: shown,
        what: describe_body(&body),
    })
}

/// The ids of `{"data": [{"id": …}]}` (OpenAI, Anthropic, most gateways) or
/// `{"models": [{"name"|"id": …}]}`, sorted and deduplicated.
pub fn parse_models(body: &[u8]) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    let list = v
        .get("data")
        .or_else(|| v.get("models"))
        .and_then(|d| d.as_array())?;
    let mut ids: Vec<String> = list
        .iter()
        .filter_map(|m| {
            m.get("id")
                .or_else(|| m.get("name"))
                .and_then(|x| x.as_str())
                .map(str::to_string)
        })
        .filter(|id| !id.trim().is_empty())
        .collect();
    ids.sort();
    ids.dedup();
    Some(ids)
}

fn describe_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
    if text.contains("<html") || text.contains("<!doctype") {
        "a web page".into()
    } else if text.trim().is_empty() {
        "an empty answer".into()
    } else {
        "JSON without a `data` list".into()
    }
}

/// A network failure in a few words (refused, timed out, name not found).
fn network_reason(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("no answer within {} s", CHECK_TIMEOUT.as_secs());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = s.to_string();
        source = s.source();
    }
    let lower = text.to_ascii_lowercase();
    if lower.contains("refused") {
        "connection refused (is the server running on that port?)".into()
    } else if lower.contains("dns") || lower.contains("resolve") || lower.contains("name") {
        format!("the host name does not resolve ({text})")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn model_lists_of_the_common_shapes_parse() {
        let openai = br#"{"object":"list","data":[{"id":"gpt-b"},{"id":"gpt-a"},{"id":"gpt-a"}]}"#;
        assert_eq!(parse_models(openai).unwrap(), ["gpt-a", "gpt-b"]);
        let ollama = br#"{"models":[{"name":"qwen2.5-coder:7b"}]}"#;
        assert_eq!(parse_models(ollama).unwrap(), ["qwen2.5-coder:7b"]);
        assert!(parse_models(b"<html>hi</html>").is_none());
        assert!(parse_models(br#"{"error":"x"}"#).is_none());
        assert_eq!(describe_body(b"<!DOCTYPE html><html>"), "a web page");
    }
}
