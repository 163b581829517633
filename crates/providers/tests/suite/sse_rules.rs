//! The event-stream rules the providers rely on, held against the SSE crate (`sseer`): a crate
//! upgrade that changes how lines, line endings, BOMs or bad bytes are read fails here first.

use bytes::Bytes;
use futures::{executor::block_on, stream, StreamExt};
use sseer::EventStream;

/// Every event of `pieces` fed in order as (event, data) pairs; `Err` ends the list.
fn decode_all(pieces: &[&[u8]]) -> Vec<Result<(String, String), String>> {
    let body = stream::iter(
        pieces
            .iter()
            .map(|p| Ok::<_, std::io::Error>(Bytes::copy_from_slice(p)))
            .collect::<Vec<_>>(),
    );
    let events = EventStream::new(body);
    block_on(
        events
            .map(|r| {
                r.map(|e| (e.event.to_string(), e.data.to_string()))
                    .map_err(|e| e.to_string())
            })
            .collect(),
    )
}

/// The events of `pieces`, which must all decode.
fn decode(pieces: &[&[u8]]) -> Vec<(String, String)> {
    decode_all(pieces).into_iter().map(|r| r.unwrap()).collect()
}

fn msg(data: &str) -> (String, String) {
    ("message".to_string(), data.to_string())
}
#[test]
fn data_lines_join_and_blank_lines_dispatch() {
    assert_eq!(
        decode(&[b"data: Hello, world!\n\n"]),
        vec![msg("Hello, world!")]
    );
    assert_eq!(
        decode(&[b"data: Hello,", b"", b" world!\n\n"]),
        vec![msg("Hello, world!")]
    );
    assert_eq!(
        decode(&[b"data: Hello, world!\n"]),
        vec![],
        "no blank line, no event"
    );
    assert_eq!(
        decode(&[b"data: Hello,\ndata: world!\n\n"]),
        vec![msg("Hello,\nworld!")]
    );
    assert_eq!(
        decode(&[b"data: a\n\ndata: b\n\n"]),
        vec![msg("a"), msg("b")]
    );
}

#[test]
fn spec_examples() {
    // WHATWG: comments, a field without colon, one optional space after the colon.
    assert_eq!(
        decode(&[b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"]),
        vec![msg("first event"), msg("second event"), msg(" third event")]
    );
    // Empty data lines: "" dispatched, "\n" dispatched, an event with no data is not.
    assert_eq!(
        decode(&[b"data\n\ndata\ndata\n\ndata:\n"]),
        vec![msg(""), msg("\n")]
    );
    assert_eq!(
        decode(&[b"event: ping\n\n"]),
        vec![],
        "no data: nothing dispatched"
    );
}

#[test]
fn event_types_reset_after_each_event() {
    assert_eq!(
        decode(&[b"event: add\ndata: 1\n\ndata: 2\n\nevent: x\n\ndata: 3\n\n"]),
        vec![("add".to_string(), "1".to_string()), msg("2"), msg("3")]
    );
}

#[test]
fn every_line_ending_and_every_split_point() {
    let stream = b"event: e\r\ndata: a\r\rdata: b\n\r\ndata:c\r\n\r\n";
    let want = vec![("e".to_string(), "a".to_string()), msg("b"), msg("c")];
    assert_eq!(decode(&[stream]), want);
    for cut in 0..stream.len() {
        let (a, b) = stream.split_at(cut);
        assert_eq!(decode(&[a, b]), want, "split at {cut}");
    }
    let bytes: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(decode(&bytes), want, "one byte at a time");
}

#[test]
fn leading_bom_is_skipped_once_even_when_split() {
    assert_eq!(decode(&[b"\xEF\xBB\xBFdata: a\n\n"]), vec![msg("a")]);
    assert_eq!(
        decode(&[b"\xEF", b"\xBB", b"\xBFdata: a\n\n"]),
        vec![msg("a")]
    );
    // A BOM later on is data, not skipped.
    assert_eq!(
        decode(&[b"data: a\n\n\xEF\xBB\xBFdata: b\n\n"]),
        vec![msg("a")],
        "a line whose field name is BOM+data is ignored"
    );
}

#[test]
fn multibyte_text_split_across_reads() {
    let s = "data: {\"t\":\"héllo 世界\"}\n\n".as_bytes();
    for cut in 0..s.len() {
        let (a, b) = s.split_at(cut);
        assert_eq!(decode(&[a, b]), vec![msg("{\"t\":\"héllo 世界\"}")]);
    }
}

#[test]
fn a_cr_at_the_end_of_a_read_is_not_a_second_line_end() {
    assert_eq!(
        decode(&[b"data: x\n\r", b"\n", b"data: y\n\n"]),
        vec![msg("x"), msg("y")]
    );
}

#[test]
fn invalid_utf8_is_an_error_after_the_good_events() {
    let got = decode_all(&[b"data: ok\n\ndata: \xFF\xFE\n\n"]);
    assert_eq!(got[0], Ok(msg("ok")));
    assert!(got[1].is_err(), "{got:?}");
}

#[test]
fn unknown_fields_lines_without_colon_and_repeated_fields_are_tolerated() {
    // Proxies add their own fields and comments; none of that may end a stream.
    assert_eq!(
        decode(&[b": OPENROUTER PROCESSING\n\nfoo: bar\nevent: a\nevent: b\nid: 1\nid: 2\nretry: x\nweird\ndata: ok\n\n"]),
        vec![("b".to_string(), "ok".to_string())]
    );
}

#[test]
fn many_events_in_one_read_and_an_event_split_over_many() {
    let mut one = String::new();
    for i in 0..1000 {
        one.push_str(&format!("data: {i}\n\n"));
    }
    let got = decode(&[one.as_bytes()]);
    assert_eq!(got.len(), 1000);
    assert_eq!(got[999], msg("999"));
    let long = format!("data: {}\n\n", "x".repeat(10_000));
    let pieces: Vec<&[u8]> = long.as_bytes().chunks(7).collect();
    assert_eq!(decode(&pieces), vec![msg(&"x".repeat(10_000))]);
}
