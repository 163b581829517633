#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

fn usage(input: u64, cached: u64, output: u64) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        output_tokens: output,
        cached_input_tokens: cached,
        reasoning_tokens: 0,
        cache_write_tokens: 0,
    }
}

#[test]
fn builtin_table_parses_and_has_unique_ids() {
    let t = ModelCatalog::from_toml(BUILTIN).unwrap();
    assert!(t.entries().len() > 40);
    let mut ids: Vec<String> = t.entries().iter().map(|e| e.id.clone()).collect();
    ids.sort();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate ids");
    for e in t.entries() {
        if let Some(p) = e.price {
            assert!(p.input > 0.0 && p.output >= p.input, "{}", e.id);
            assert!(p.cached_input.unwrap_or(p.input) <= p.input, "{}", e.id);
        }
        if e.thinking == Some(ThinkingStyle::Effort) {
            assert!(
                e.efforts.as_ref().is_some_and(|v| !v.is_empty()),
                "{}",
                e.id
            );
        }
    }
}

#[test]
fn context_windows_of_well_known_models() {
    let cases = [
        ("gpt-4o", Some(128_000)),
        ("gpt-4o-mini-2024-07-18", Some(128_000)),
        ("gpt-4.1", Some(1_047_576)),
        ("gpt-4.1-nano", Some(1_047_576)),
        ("gpt-4", Some(8_192)),
        ("gpt-4-0613", Some(8_192)),
        ("o3", Some(200_000)),
        ("o3-mini", Some(200_000)),
        ("o4-mini", Some(200_000)),
        ("o1-mini", Some(128_000)),
        ("gpt-5", Some(400_000)),
        ("gpt-5-mini", Some(400_000)),
        ("GPT-5.1-codex", Some(400_000)),
        ("deepseek-chat", Some(131_072)),
        ("deepseek-reasoner", Some(131_072)),
        ("claude-sonnet-4-5-20250929", Some(200_000)),
        ("anthropic/claude-3-5-haiku", Some(200_000)),
        ("anthropic/claude-sonnet-4.5", Some(200_000)),
        ("qwen2.5-coder:32b", Some(131_072)),
        ("llama3.1:8b", Some(131_072)),
        ("meta-llama/llama-3.3-70b-instruct", Some(131_072)),
        ("llama3:8b", Some(8_192)),
        ("models/gemini-2.5-pro", Some(1_048_576)),
        ("some-unknown-model", None),
        ("", None),
    ];
    for (model, want) in cases {
        assert_eq!(context_window_for(model), want, "{model}");
    }
}

#[test]
fn versions_never_borrow_an_older_rows_price() {
    // Newer versions without a row of their own are unknown, not mispriced.
    for m in [
        "claude-opus-4-7",
        "gpt-5.4",
        "gpt-4.5-preview",
        "claude-sonnet-5",
    ] {
        let info = model_info(m);
        assert!(!info.is_known(), "{m} matched {:?}", info.matched);
        assert_eq!(info.context_window, UNKNOWN_CONTEXT_WINDOW);
        assert_eq!(cost_usd(m, &usage(1000, 0, 1000)), None, "{m}");
    }
    // Dated snapshots find their family.
    assert_eq!(
        model_info("claude-opus-4-20250514").matched.as_deref(),
        Some("claude-opus-4")
    );
    assert_eq!(
        model_info("claude-opus-4-1-20250805").matched.as_deref(),
        Some("claude-opus-4-1")
    );
    assert_eq!(
        model_info("gpt-5-mini-2025-08-07").matched.as_deref(),
        Some("gpt-5-mini")
    );
}

#[test]
fn capabilities() {
    let c = model_info("claude-sonnet-4-5");
    assert!(c.vision && c.reasoning && c.tools);
    assert_eq!(c.thinking, Some(ThinkingStyle::Budget));
    assert_eq!(c.max_output, Some(64_000));
    let d = model_info("deepseek-reasoner");
    assert_eq!(d.thinking, Some(ThinkingStyle::Toggle));
    assert!(!d.vision);
    assert!(!model_info("o1-mini").tools);
    assert_eq!(
        model_info("gpt-5.2").efforts,
        ["none", "low", "medium", "high", "xhigh"]
    );
    let u = model_info("totally-new-model");
    assert!(!u.is_known() && u.tools && u.price.is_none());
}

#[test]
fn cost_matches_a_hand_computation() {
    // claude-sonnet-4-5: $3 input, $0.30 cache read, $15 output per million tokens.
    // 120,000 input of which 100,000 read from cache, 2,000 output:
    //   20,000 × 3/1e6 = 0.06; 100,000 × 0.3/1e6 = 0.03; 2,000 × 15/1e6 = 0.03 → $0.12.
    let c = cost_usd(
        "claude-sonnet-4-5-20250929",
        &usage(120_000, 100_000, 2_000),
    )
    .unwrap();
    assert!((c - 0.12).abs() < 1e-9, "{c}");
    // Of the 20,000 uncached, 10,000 were cache writes at $3.75:
    //   10,000 × 3/1e6 = 0.03; 10,000 × 3.75/1e6 = 0.0375; + 0.03 + 0.03 → $0.1275.
    let p = model_info("claude-sonnet-4-5").price.unwrap();
    let c = p.cost_with_cache_writes(&usage(120_000, 100_000, 2_000), 10_000);
    assert!((c - 0.1275).abs() < 1e-9, "{c}");
    // gpt-4o: one million in, one million out: 2.50 + 10.00.
    let c = cost_usd("gpt-4o", &usage(1_000_000, 0, 1_000_000)).unwrap();
    assert!((c - 12.5).abs() < 1e-9, "{c}");
    // No cached price: cached tokens cost as input (gpt-4-turbo $10 / $30).
    let c = cost_usd("gpt-4-turbo", &usage(1_000, 1_000, 0)).unwrap();
    assert!((c - 0.01).abs() < 1e-9, "{c}");
    // Inconsistent usage (cached > input) never goes negative.
    let c = cost_usd("gpt-4o", &usage(10, 50, 0)).unwrap();
    assert!(c >= 0.0);
}

#[test]
fn overrides_merge_field_by_field() {
    let user = ModelCatalog::from_toml(
        r#"
        [[model]]
        id = "gpt-4o"
        context_window = 64000

        [[model]]
        id = "my-local-coder"
        context_window = 32768
        vision = true
        price = { input = 0.0, output = 0.0 }
        "#,
    )
    .unwrap();
    let t = ModelCatalog::builtin().merged(&user);
    let o = t.lookup("gpt-4o-2024-08-06");
    assert_eq!(o.context_window, 64_000);
    assert_eq!(o.max_output, Some(16_384), "untouched fields stay");
    assert_eq!(o.price.unwrap().input, 2.5);
    let m = t.lookup("my-local-coder:q4");
    assert!(m.vision && m.is_known());
    assert_eq!(t.cost_usd("my-local-coder", &usage(5, 0, 5)), Some(0.0));
    let json = ModelCatalog::from_json(r#"[{"id": "gpt-4o", "vision": false}]"#).unwrap();
    assert!(
        !ModelCatalog::builtin()
            .merged(&json)
            .lookup("gpt-4o")
            .vision
    );
    assert!(ModelCatalog::from_toml("[[model]]\nid = \"\"").is_err());
    assert!(ModelCatalog::from_toml("[[model]]\nid = \"x\"\nbogus = 1").is_err());
}
