//! The spending cap and a price for models the table does not know, from the environment or
//! the settings file: `CAIRN_BUDGET_USD` / `CAIRN_BUDGET_TOKENS` (flags win), and
//! `CAIRN_PRICE_PER_MTOK="INPUT,OUTPUT"` (dollars per million tokens) for unpriced models —
//! a local server, a proxy, the test kit's mock.

use cairn_engine::spend::SpendLimit;
use cairn_protocol::TokenUsage;

/// The cap the environment sets, if any (a malformed value is named and ignored).
pub fn limit_from_env() -> Option<SpendLimit> {
    let read = |k: &str| crate::user_config::var(k).filter(|v| !v.trim().is_empty());
    if let Some(v) = read("CAIRN_BUDGET_USD") {
        match v.trim().parse::<f64>() {
            Ok(d) if d > 0.0 => return Some(SpendLimit::Usd(d)),
            _ => tracing::warn!("CAIRN_BUDGET_USD={v:?} is not a positive amount; ignored"),
        }
    }
    if let Some(v) = read("CAIRN_BUDGET_TOKENS") {
        match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => return Some(SpendLimit::Tokens(n)),
            _ => tracing::warn!("CAIRN_BUDGET_TOKENS={v:?} is not a positive number; ignored"),
        }
    }
    None
}

/// `(input, output)` dollars per million tokens from `CAIRN_PRICE_PER_MTOK`.
pub fn price_override() -> Option<(f64, f64)> {
    parse_price(&crate::user_config::var("CAIRN_PRICE_PER_MTOK")?)
}

/// `"INPUT,OUTPUT"` as two non-negative prices.
pub fn parse_price(v: &str) -> Option<(f64, f64)> {
    let (i, o) = v.split_once(',')?;
    let (i, o) = (i.trim().parse::<f64>().ok()?, o.trim().parse::<f64>().ok()?);
    (i >= 0.0 && o >= 0.0 && i.is_finite() && o.is_finite()).then_some((i, o))
}

/// The cost of `usage` at the override price, when one is set.
pub fn override_cost(usage: &TokenUsage) -> Option<f64> {
    let (input, output) = price_override()?;
    Some(
        usage.input_tokens as f64 * input / 1_000_000.0
            + usage.output_tokens as f64 * output / 1_000_000.0,
    )
}

/// What a request of `model` that used `usage` cost: the catalogue's price, else the
/// `CAIRN_PRICE_PER_MTOK` override (`None`: unknown).
pub fn cost_usd(model: &str, usage: &TokenUsage) -> Option<f64> {
    cairn_providers::cost_usd(model, usage).or_else(|| override_cost(usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_price_is_two_amounts() {
        assert_eq!(parse_price("3, 15"), Some((3.0, 15.0)));
        assert_eq!(parse_price("3"), None);
        assert_eq!(parse_price("-1,2"), None);
    }
}
