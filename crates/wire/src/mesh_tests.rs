//! The mesh messages: round trips, the MACs, and what a hostile sender
//! cannot get past the decoders.

use super::*;

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";
const NONCE: [u8; NONCE_LEN] = [7; NONCE_LEN];

fn origin() -> Origin {
    Origin {
        test: "TCP_RR".into(),
        destination: "198.18.0.2".parse().unwrap(),
        port: 12865,
        duration_secs: 3,
        start_in_ms: 250,
    }
}

#[test]
fn keys_lose_trailing_whitespace_and_are_bounded() {
    assert_eq!(
        key_from_file_bytes(b"0123456789abcdefXYZ\n").unwrap(),
        b"0123456789abcdefXYZ"
    );
    assert_eq!(
        key_from_file_bytes(b"0123456789abcdef \r\n\t").unwrap(),
        b"0123456789abcdef"
    );
    // Leading and inner bytes are the key's, binary included.
    let binary = [0u8, 1, 2, 255, 10, 32, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0];
    assert_eq!(key_from_file_bytes(&binary).unwrap(), binary);
    for short in [&b""[..], b"short\n", b"               \n\n\n\n"] {
        assert!(key_from_file_bytes(short).is_err(), "{short:?}");
    }
    assert!(key_from_file_bytes(&[b'k'; KEY_MAX + 1]).is_err());
}

#[test]
fn a_signed_request_round_trips_and_verifies_only_with_its_key_and_nonce() {
    let m = origin().sign(KEY, &NONCE);
    assert_eq!(m.kind(), kind::NG_MESH_ORIGIN);
    let read = SignedOrigin::decode(&m).unwrap();
    assert_eq!(read.origin, origin());
    assert_eq!(read.nonce, NONCE);
    assert!(read.verify(KEY, &NONCE));
    assert_eq!(read.encode(), m);
    assert!(!read.verify(b"0123456789abcdef0123456789abcdeF", &NONCE));
    let mut other = NONCE;
    other[31] ^= 1;
    assert!(!read.verify(KEY, &other));
    // The key never travels: no 16-byte window of the message is it.
    assert!(!m.bytes.windows(16).any(|w| w == &KEY[..16]));
    let v6 = Origin {
        destination: "fd00::2".parse().unwrap(),
        ..origin()
    };
    let read = SignedOrigin::decode(&v6.sign(KEY, &NONCE)).unwrap();
    assert_eq!(read.origin, v6);
    assert!(read.verify(KEY, &NONCE));
}

#[test]
fn every_signed_field_is_covered_by_the_mac() {
    let m = origin().sign(KEY, &NONCE);
    // Flip one bit of each signed byte: the message either fails to decode
    // or fails to verify.
    for at in 0..SIGNED_END {
        let mut bad = m.clone();
        bad.bytes[DATA_OFFSET + at] ^= 0x01;
        if let Ok(read) = SignedOrigin::decode(&bad) {
            assert!(!read.verify(KEY, &NONCE), "byte {at} unsigned");
        }
    }
    let mut bad = m.clone();
    bad.bytes[DATA_OFFSET + ORIGIN_MAC_AT] ^= 0x80;
    assert!(!SignedOrigin::decode(&bad).unwrap().verify(KEY, &NONCE));
}

#[test]
fn requests_out_of_bounds_are_refused_on_decode() {
    let bad_origins = [
        Origin {
            test: "TCP_SENDFILE".into(),
            ..origin()
        },
        Origin {
            test: "tcp_rr".into(),
            ..origin()
        },
        Origin {
            destination: "0.0.0.0".parse().unwrap(),
            ..origin()
        },
        Origin {
            destination: "224.0.0.1".parse().unwrap(),
            ..origin()
        },
        Origin {
            destination: "255.255.255.255".parse().unwrap(),
            ..origin()
        },
        Origin {
            port: 0,
            ..origin()
        },
        Origin {
            duration_secs: 0,
            ..origin()
        },
        Origin {
            start_in_ms: MAX_START_MS + 1,
            ..origin()
        },
    ];
    for o in bad_origins {
        assert!(o.check().is_err(), "{o:?}");
        assert!(SignedOrigin::decode(&o.sign(KEY, &NONCE)).is_err(), "{o:?}");
    }
    let good = origin().sign(KEY, &NONCE);
    let corrupt = |at: usize, byte: u8| {
        let mut m = good.clone();
        m.bytes[DATA_OFFSET + at] = byte;
        SignedOrigin::decode(&m)
    };
    assert!(corrupt(0, 0).is_err(), "magic");
    assert!(corrupt(5, 1).is_err(), "port over 65535");
    assert!(corrupt(19, 5).is_err(), "family");
    assert!(corrupt(ADDRESS_AT + 8, 1).is_err(), "bytes after IPv4");
    assert!(corrupt(TEST_AT + 15, b'X').is_err(), "test without NUL");
    assert!(corrupt(TEST_AT + 10, b'X').is_err(), "bytes after the name");
    assert!(corrupt(TEST_AT, 0xff).is_err(), "not text");
    assert!(corrupt(ORIGIN_END, 1).is_err(), "trailing fields");
}

#[test]
fn challenges_round_trip() {
    for c in [
        Challenge::Nonce(NONCE),
        Challenge::NotEnabled(HOW_TO_ENABLE.into()),
        Challenge::Refused("too many mesh tests".into()),
    ] {
        assert_eq!(Challenge::decode(&c.encode()).unwrap(), c);
    }
    let mut m = Challenge::Nonce(NONCE).encode();
    m.set_data_u32(1, 9);
    assert!(Challenge::decode(&m).is_err());
    m.set_data_u32(1, Status::Failed as u32);
    assert!(Challenge::decode(&m).is_err());
    assert!(decode_hello(&encode_hello()).is_ok());
    let mut hello = encode_hello();
    hello.set_data_u32(3, 1);
    assert!(decode_hello(&hello).is_err());
    // A stock netserver's answer is no challenge.
    assert!(Challenge::decode(&Message::new(0, 998)).is_err());
}

fn read_all(messages: &[Message]) -> Result<ReadResult, String> {
    let mut reader = ResultReader::default();
    for (i, m) in messages.iter().enumerate() {
        if let Some(done) = reader.push(m)? {
            assert_eq!(i, messages.len() - 1, "ended early");
            return Ok(done);
        }
    }
    Err("not finished".into())
}

#[test]
fn results_of_every_length_round_trip_and_verify() {
    for len in [
        0,
        1,
        CHUNK_LEN - 1,
        CHUNK_LEN,
        CHUNK_LEN + 1,
        3 * CHUNK_LEN,
        5000,
    ] {
        let text: String = "é{".chars().cycle().take(len).collect();
        let outcome = Outcome::Record(text.clone());
        let messages = encode_result(&outcome, Some((KEY, &NONCE)));
        assert_eq!(messages.len(), text.len().div_ceil(CHUNK_LEN).max(1));
        let read = read_all(&messages).unwrap();
        assert_eq!(read.outcome, outcome);
        assert!(read.verify(KEY, &NONCE));
        assert!(!read.verify(KEY, &[0; NONCE_LEN]));
        assert!(!read.verify(b"another key, also long enough", &NONCE));
    }
    // Unsigned refusals read, and do not verify.
    let refused = Outcome::Refused("peer 10.0.0.1 is outside --mesh-peers".into());
    let read = read_all(&encode_result(&refused, None)).unwrap();
    assert_eq!(read.outcome, refused);
    assert!(!read.verify(KEY, &NONCE));
    // A record over the bound is cut on a character boundary.
    let long = "é".repeat(MAX_RESULT_LEN);
    let read = read_all(&encode_result(&Outcome::Failed(long), None)).unwrap();
    let Outcome::Failed(text) = read.outcome else {
        panic!()
    };
    assert!(text.len() <= MAX_RESULT_LEN && text.len() > MAX_RESULT_LEN - 2);
}

#[test]
fn a_tampered_result_fails_to_verify_or_to_read() {
    let messages = encode_result(&Outcome::Record("{\"x\":1}".into()), Some((KEY, &NONCE)));
    let mut changed = messages.clone();
    changed[0].bytes[DATA_OFFSET + CHUNK_AT + 5] = b'2';
    assert!(!read_all(&changed).unwrap().verify(KEY, &NONCE));
    let mut status = messages.clone();
    status[0].set_data_u32(1, Status::Failed as u32);
    assert!(!read_all(&status).unwrap().verify(KEY, &NONCE));
}

#[test]
fn hostile_result_sequences_are_refused() {
    let text = "x".repeat(2 * CHUNK_LEN + 10);
    let good = encode_result(&Outcome::Record(text), Some((KEY, &NONCE)));
    assert!(read_all(&good).is_ok());
    // Out of order, repeated, disagreeing, too long, short middle part,
    // MAC early, trailing bytes, wrong type.
    assert!(read_all(&[good[1].clone(), good[0].clone()]).is_err());
    assert!(read_all(&[good[0].clone(), good[0].clone()]).is_err());
    let mut m = good.clone();
    m[1].set_data_u32(3, 99);
    assert!(read_all(&m).is_err());
    let mut m = good.clone();
    m[1].set_data_u32(1, Status::Refused as u32);
    assert!(read_all(&m).is_err());
    let mut m = good.clone();
    m[0].set_data_u32(3, (MAX_RESULT_LEN + 1) as u32);
    assert!(read_all(&m).is_err());
    let mut m = good.clone();
    m[0].set_data_u32(4, 10);
    assert!(read_all(&m).is_err());
    let mut m = good.clone();
    m[0].bytes[DATA_OFFSET + RESULT_MAC_AT] = 1;
    assert!(read_all(&m).is_err());
    let mut m = good.clone();
    m[2].bytes[DATA_OFFSET + CHUNK_AT + 10] = b'!';
    assert!(read_all(&m).is_err());
    assert!(ResultReader::default().push(&Message::new(0, 998)).is_err());
    let mut m = good.clone();
    m[0].set_data_u32(4, (CHUNK_LEN + 1) as u32);
    assert!(read_all(&m).is_err());
}

#[test]
fn every_test_has_its_selection() {
    for test in TESTS {
        assert!(
            selection(test).unwrap().starts_with("THROUGHPUT,"),
            "{test}"
        );
    }
    assert!(selection("TCP_RR").unwrap().contains("P99_LATENCY"));
    assert!(!selection("TCP_STREAM").unwrap().contains("LATENCY"));
    assert_eq!(selection("TCP_SENDFILE"), None);
}
