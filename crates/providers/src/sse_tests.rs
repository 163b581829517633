#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

/// Every event of `pieces` fed in order, as owned (event, data) pairs.
fn decode(pieces: &[&[u8]]) -> Vec<(String, String)> {
    let mut d = SseDecoder::new();
    let mut out = Vec::new();
    for p in pieces {
        d.push(p);
        while let Some(ev) = d.next_event().unwrap() {
            out.push((ev.event.to_string(), ev.data.to_string()));
        }
    }
    out
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
fn a_trailing_cr_waits_for_a_possible_lf() {
    let mut d = SseDecoder::new();
    d.push(b"data: x\n\r");
    assert_eq!(d.next_event().unwrap(), None, "CR may be half of CRLF");
    d.push(b"\n");
    assert_eq!(
        d.next_event().unwrap(),
        Some(SseEvent {
            event: "message",
            data: "x"
        })
    );
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
fn invalid_utf8_is_an_error_after_the_good_events() {
    let mut d = SseDecoder::new();
    d.push(b"data: ok\n\ndata: \xFF\xFE\n\n");
    assert_eq!(d.next_event().unwrap().unwrap().data, "ok");
    assert!(d.next_event().is_err());
}

#[test]
fn buffer_keeps_only_the_unfinished_line() {
    let mut d = SseDecoder::new();
    for i in 0..1000 {
        d.push(format!("data: {i}\n\ndata: par").as_bytes());
        assert_eq!(d.next_event().unwrap().unwrap().data, i.to_string());
        assert_eq!(d.next_event().unwrap(), None);
        d.push(b"t\n\n");
        assert_eq!(d.next_event().unwrap().unwrap().data, "part");
    }
    assert!(d.buf.len() < 64, "decoded bytes are dropped");
}
