#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::fastjson::Obj;

#[derive(Debug, serde::Deserialize)]
struct Doc<'a> {
    #[serde(borrow)]
    text: Option<Str<'a>>,
}

/// Parses `data` fully and learns its shape around `text`.
fn learn(shapes: &mut Shapes<u8>, data: &str, kind: u8) {
    let Obj(doc) = serde_json::from_str::<Obj<Doc<'_>>>(data).unwrap();
    shapes.learn(data, doc.text.as_ref().unwrap(), kind);
}

fn full(data: &str) -> Option<String> {
    let Obj(doc) = serde_json::from_str::<Obj<Doc<'_>>>(data).ok()?;
    doc.text.map(|t| t.0.into_owned())
}

const LEARNED: &str = r#"{"id":"c-1","text":"w1 ","n":null}"#;

#[test]
fn a_repeat_with_another_value_is_read_without_a_full_parse() {
    let mut shapes = Shapes::default();
    learn(&mut shapes, LEARNED, 7);
    let (kind, v) = shapes
        .matching(r#"{"id":"c-1","text":"hello","n":null}"#)
        .unwrap();
    assert_eq!((kind, v.as_str()), (7, "hello"));
    assert!(matches!(v.0, Cow::Borrowed("hello")));
    let (_, v) = shapes
        .matching(r#"{"id":"c-1","text":"a\"b\u00e9\n","n":null}"#)
        .unwrap();
    assert_eq!(v.as_str(), "a\"bé\n");
    let (_, v) = shapes
        .matching(r#"{"id":"c-1","text":"","n":null}"#)
        .unwrap();
    assert_eq!(v.as_str(), "");
}

#[test]
fn other_documents_do_not_match() {
    let mut shapes = Shapes::default();
    learn(&mut shapes, LEARNED, 1);
    for data in [
        r#"{"id":"c-2","text":"x","n":null}"#,
        r#"{"id":"c-1","text":"x","n":1}"#,
        r#"{"id":"c-1","text":"x","n":null} "#,
        r#"{"id":"c-1","text":"x","n":null"#,
        r#"{"id":"c-1","text":"#,
        r#"{"id":"c-1","text":"","n":null,"text":"","n":null}"#,
        "",
    ] {
        assert!(shapes.matching(data).is_none(), "{data}");
    }
}

/// Every middle put between the learned prefix and suffix: the shape either reads exactly
/// what a full parse reads, or declines (and then the full parse decides).
#[test]
fn a_match_always_reads_what_a_full_parse_reads() {
    let mut shapes = Shapes::default();
    learn(&mut shapes, LEARNED, 0);
    let (prefix, suffix) = LEARNED.split_once("w1 ").unwrap();
    let pieces = [
        "",
        "x",
        "\"",
        "\\",
        "\\\"",
        "\\\\",
        "\\n",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\\ud83d",
        "\\x",
        "\u{1}",
        "\t",
        "é",
        "😀",
        "\",\"text\":\"dup",
        "\",\"n\":1,\"m\":\"",
        "\"},{\"text\":\"",
        "\\\\\"",
        "a\"b",
        "}",
        "\"\"",
    ];
    let mut matched = 0;
    for a in pieces {
        for b in pieces {
            let middle = format!("{a}{b}");
            let data = format!("{prefix}{middle}{suffix}");
            let expected = full(&data);
            match shapes.matching(&data) {
                Some((_, v)) => {
                    matched += 1;
                    assert_eq!(Some(v.as_str().to_string()), expected, "{data}");
                }
                None => {
                    // Declined: only when the middle is not one whole string token, which a
                    // full parse then rejects or reads with another structure.
                    let token = format!("\"{middle}\"");
                    assert!(
                        serde_json::from_str::<String>(&token).is_err(),
                        "declined a plain string: {data}"
                    );
                }
            }
        }
    }
    assert!(matched > 100, "the shape applied {matched} times");
}

#[test]
fn escaped_and_empty_values_teach_nothing() {
    let mut shapes = Shapes::default();
    learn(&mut shapes, r#"{"text":"a\nb"}"#, 0);
    learn(&mut shapes, r#"{"text":""}"#, 0);
    assert!(shapes.matching(r#"{"text":"x"}"#).is_none());
}

#[test]
fn values_that_are_not_a_whole_string_of_the_data_teach_nothing() {
    let mut shapes = Shapes::default();
    let elsewhere = String::from("w1 ");
    shapes.learn(LEARNED, &Str(Cow::Borrowed(&elsewhere)), 0);
    let start = LEARNED.find("w1 ").unwrap();
    let part_of_a_string = &LEARNED[start..start + 2];
    shapes.learn(LEARNED, &Str(Cow::Borrowed(part_of_a_string)), 0);
    let a_number = &LEARNED[LEARNED.len() - 5..LEARNED.len() - 1];
    assert_eq!(a_number, "null");
    shapes.learn(LEARNED, &Str(Cow::Borrowed(a_number)), 0);
    assert!(shapes.known.is_empty());
}

#[test]
fn the_most_recent_shapes_are_kept_and_tagged() {
    let mut shapes = Shapes::default();
    for i in 0..=MAX_SHAPES {
        learn(&mut shapes, &format!(r#"{{"id":{i},"text":"v"}}"#), i as u8);
    }
    assert_eq!(shapes.known.len(), MAX_SHAPES);
    assert!(
        shapes.matching(r#"{"id":0,"text":"z"}"#).is_none(),
        "oldest dropped"
    );
    let (kind, _) = shapes.matching(r#"{"id":1,"text":"z"}"#).unwrap();
    assert_eq!(kind, 1);
    assert_eq!(shapes.known[0].kind, 1, "a hit moves to the front");
    learn(&mut shapes, r#"{"id":1,"text":"again"}"#, 9);
    assert_eq!(
        shapes.known.len(),
        MAX_SHAPES,
        "a known shape is not added twice"
    );
}
