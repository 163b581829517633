#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

use bytes::Bytes;
use futures::StreamExt;

/// What a decoder made of a stream: the events, and whether it stopped on bad UTF-8.
#[derive(Debug, PartialEq, Eq)]
struct Decoded {
    events: Vec<(String, String)>,
    failed: bool,
}

/// The stream, read in `reads`, by [`SseDecoder`].
fn ours(reads: &[&[u8]]) -> Decoded {
    let mut d = SseDecoder::default();
    let mut events = Vec::new();
    let mut push = |e: &str, data: &str| -> ControlFlow<()> {
        events.push((e.to_owned(), data.to_owned()));
        ControlFlow::Continue(())
    };
    for r in reads {
        if d.feed(r, &mut push).is_err() {
            return Decoded {
                events,
                failed: true,
            };
        }
    }
    let failed = d.finish(&mut push).is_err();
    Decoded { events, failed }
}

/// The same reads through `sseer::EventStream`, up to its first error.
fn reference(reads: &[&[u8]]) -> Decoded {
    let chunks: Vec<Result<Bytes, std::convert::Infallible>> = reads
        .iter()
        .map(|r| Ok(Bytes::copy_from_slice(r)))
        .collect();
    let mut stream = sseer::EventStream::new(futures::stream::iter(chunks));
    let mut events = Vec::new();
    let failed = futures::executor::block_on(async {
        while let Some(ev) = stream.next().await {
            match ev {
                Ok(ev) => events.push((ev.event.to_string(), ev.data.to_string())),
                Err(_) => return true,
            }
        }
        false
    });
    Decoded { events, failed }
}

/// A small deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const LINES: &[&[u8]] = &[
    b"data: {\"choices\":[{\"delta\":{\"content\":\"w1 \"}}]}",
    b"data:x",
    b"data:  two spaces",
    b"data",
    b"data:",
    b"data: ",
    b"data: caf\xC3\xA9 \xF0\x9F\x98\x80",
    b"event: response.output_text.delta",
    b"event:",
    b"event",
    b": keep-alive",
    b":",
    b"id: 7",
    b"id",
    b"retry: 100",
    b"retry: soon",
    b"unknown: field",
    b"DATA: not data",
    b"data: [DONE]",
    b"",
    b"",
    b"",
];
const ENDINGS: &[&[u8]] = &[b"\n", b"\n", b"\r\n", b"\r"];

/// A stream of `n` random lines, maybe after a byte order mark.
fn random_stream(rng: &mut Rng, n: usize, bad_utf8: bool) -> Vec<u8> {
    let mut s = Vec::new();
    if rng.below(8) == 0 {
        s.extend_from_slice(BOM);
    }
    for _ in 0..n {
        if bad_utf8 && rng.below(40) == 0 {
            s.extend_from_slice(b"data: \xFF\xFE");
        } else {
            s.extend_from_slice(LINES[rng.below(LINES.len())]);
        }
        s.extend_from_slice(ENDINGS[rng.below(ENDINGS.len())]);
    }
    if rng.below(3) == 0 {
        s.extend_from_slice(b"data: unterminated");
    }
    s
}

/// `stream` cut into reads at random points, with some empty reads between.
fn random_cuts<'a>(rng: &mut Rng, stream: &'a [u8]) -> Vec<&'a [u8]> {
    let mut reads = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        if rng.below(10) == 0 {
            reads.push(&stream[at..at]);
        }
        let len = 1 + rng.below(24.min(stream.len() - at));
        reads.push(&stream[at..at + len]);
        at += len;
    }
    reads
}

#[test]
fn random_streams_cut_anywhere_decode_as_sseer_decodes_them() {
    let mut rng = Rng(0x5EE);
    for case in 0..3000 {
        let lines = 1 + rng.below(30);
        let stream = random_stream(&mut rng, lines, case % 4 == 0);
        let whole = [stream.as_slice()];
        let expected = reference(&whole);
        assert_eq!(
            ours(&whole),
            expected,
            "one read: {:?}",
            stream.escape_ascii().to_string()
        );
        for _ in 0..4 {
            let reads = random_cuts(&mut rng, &stream);
            assert_eq!(
                ours(&reads),
                reference(&reads),
                "reads {:?}",
                reads
                    .iter()
                    .map(|r| r.escape_ascii().to_string())
                    .collect::<Vec<_>>()
            );
        }
    }
}

#[test]
fn every_single_cut_of_a_tricky_stream_gives_the_same_events() {
    let stream: &[u8] = b"\xEF\xBB\xBFdata: a\r\ndata: b\r\rid: 1\n: c\nevent: e\ndata:caf\xC3\xA9\r\n\r\nevent:\ndata\n\ndata: last\r";
    let expected = reference(&[stream]);
    assert_eq!(
        expected.events,
        vec![
            ("message".to_owned(), "a\nb".to_owned()),
            ("e".to_owned(), "café".to_owned()),
            ("message".to_owned(), String::new()),
        ]
    );
    for i in 0..=stream.len() {
        for j in i..=stream.len() {
            let reads = [&stream[..i], &stream[i..j], &stream[j..]];
            assert_eq!(ours(&reads), expected, "cut at {i} and {j}");
        }
    }
    let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
    assert_eq!(ours(&bytewise), expected);
}

#[test]
fn a_final_line_ended_by_cr_still_dispatches() {
    let reads: [&[u8]; 2] = [b"data: x\n", b"\r"];
    assert_eq!(
        ours(&reads).events,
        vec![("message".to_owned(), "x".to_owned())]
    );
    assert_eq!(ours(&reads), reference(&reads));
}

#[test]
fn an_unterminated_event_is_dropped_at_the_end() {
    let reads: [&[u8]; 1] = [b"data: done\n\ndata: half\n"];
    assert_eq!(
        ours(&reads).events,
        vec![("message".to_owned(), "done".to_owned())]
    );
}

#[test]
fn bad_utf8_in_a_value_is_an_error_and_in_a_comment_is_not() {
    let bad: [&[u8]; 2] = [b"data: ok\n\ndata: \xFF", b"\n\n"];
    let got = ours(&bad);
    assert!(got.failed);
    assert_eq!(got.events, vec![("message".to_owned(), "ok".to_owned())]);
    let comment: [&[u8]; 1] = [b": \xFF\ndata: fine\n\n"];
    assert_eq!(ours(&comment), reference(&comment));
    assert!(!ours(&comment).failed);
}

#[test]
fn a_break_stops_decoding_at_that_event() {
    let mut d = SseDecoder::default();
    let mut seen = Vec::new();
    let flow = d
        .feed(
            b"data: 1\n\ndata: 2\n\ndata: 3\n\n",
            &mut |_, data: &str| {
                seen.push(data.to_owned());
                if data == "2" {
                    ControlFlow::Break(7)
                } else {
                    ControlFlow::Continue(())
                }
            },
        )
        .unwrap();
    assert_eq!(flow, ControlFlow::Break(7));
    assert_eq!(seen, ["1", "2"]);
}
