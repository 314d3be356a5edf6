use std::io::{Cursor, Read, Write};

use super::*;

/// A client's bytes in, the server's bytes out.
struct Duplex {
    input: Cursor<Vec<u8>>,
    output: Vec<u8>,
}

impl Read for Duplex {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for Duplex {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

const EXPORT: Export = Export { size_bytes: 1 << 30, flags: FLAG_HAS_FLAGS | FLAG_SEND_FLUSH };

fn option(kind: u32, data: &[u8]) -> Vec<u8> {
    let mut out = IHAVEOPT.to_be_bytes().to_vec();
    out.extend_from_slice(&kind.to_be_bytes());
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(data);
    out
}

fn run(client: Vec<u8>) -> (io::Result<Handshake>, Vec<u8>) {
    let mut d = Duplex { input: Cursor::new(client), output: Vec::new() };
    let r = handshake(&mut d, EXPORT);
    (r, d.output)
}

#[test]
fn export_name_gets_size_and_flags_without_zeroes_when_asked() {
    let mut client = 3u32.to_be_bytes().to_vec(); // fixed newstyle + no zeroes
    client.extend(option(1, b""));
    let (r, out) = run(client);
    assert_eq!(r.unwrap(), Handshake::Transmission);
    assert_eq!(&out[0..8], &NBDMAGIC.to_be_bytes());
    assert_eq!(&out[8..16], &IHAVEOPT.to_be_bytes());
    assert_eq!(out.len(), 18 + 10, "no 124 zero bytes");
    assert_eq!(u64::from_be_bytes(out[18..26].try_into().unwrap()), 1 << 30);
    assert_eq!(u16::from_be_bytes(out[26..28].try_into().unwrap()), EXPORT.flags);
}

#[test]
fn go_with_block_size_request_answers_info_then_ack() {
    let mut client = 1u32.to_be_bytes().to_vec();
    let mut go = 0u32.to_be_bytes().to_vec(); // empty name
    go.extend_from_slice(&1u16.to_be_bytes());
    go.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
    client.extend(option(7, &go));
    let (r, out) = run(client);
    assert_eq!(r.unwrap(), Handshake::Transmission);
    // Three replies: export info, block sizes, ack.
    let kinds: Vec<u32> = {
        let mut at = 18;
        let mut kinds = Vec::new();
        while at < out.len() {
            kinds.push(u32::from_be_bytes(out[at + 12..at + 16].try_into().unwrap()));
            let len = u32::from_be_bytes(out[at + 16..at + 20].try_into().unwrap()) as usize;
            at += 20 + len;
        }
        kinds
    };
    assert_eq!(kinds, [REP_INFO, REP_INFO, REP_ACK]);
}

#[test]
fn unknown_options_are_refused_and_haggling_goes_on() {
    let mut client = 1u32.to_be_bytes().to_vec();
    client.extend(option(99, b"xyz"));
    client.extend(option(2, b""));
    let (r, out) = run(client);
    assert_eq!(r.unwrap(), Handshake::Closed);
    assert_eq!(u32::from_be_bytes(out[30..34].try_into().unwrap()), REP_ERR_UNSUP);
}

#[test]
fn hostile_handshakes_end_with_an_error_not_a_panic() {
    // Old-style client flags, a bad magic, a 4 GiB option, a cut-off stream, a malformed GO.
    let mut bad_magic = 1u32.to_be_bytes().to_vec();
    bad_magic.extend_from_slice(&0xdead_beef_u64.to_be_bytes());
    let mut huge = 1u32.to_be_bytes().to_vec();
    huge.extend_from_slice(&IHAVEOPT.to_be_bytes());
    huge.extend_from_slice(&7u32.to_be_bytes());
    huge.extend_from_slice(&u32::MAX.to_be_bytes());
    for client in [0u32.to_be_bytes().to_vec(), bad_magic, huge, vec![0, 0]] {
        assert!(run(client).0.is_err());
    }
    let mut malformed = 1u32.to_be_bytes().to_vec();
    malformed.extend(option(7, &[0, 0, 0, 200]));
    let (r, out) = run(malformed);
    assert!(r.is_err(), "the stream ends after the refusal");
    assert_eq!(u32::from_be_bytes(out[30..34].try_into().unwrap()), REP_ERR_INVALID);
}

#[test]
fn requests_parse_and_replies_carry_the_cookie() {
    let mut bytes = REQUEST_MAGIC.to_be_bytes().to_vec();
    bytes.extend_from_slice(&CMD_FLAG_FUA.to_be_bytes());
    bytes.extend_from_slice(&1u16.to_be_bytes());
    bytes.extend_from_slice(&77u64.to_be_bytes());
    bytes.extend_from_slice(&4096u64.to_be_bytes());
    bytes.extend_from_slice(&512u32.to_be_bytes());
    let r = parse_request(&bytes).unwrap().unwrap();
    assert_eq!((r.command, r.cookie, r.offset, r.length, r.flags), (Command::Write, 77, 4096, 512, CMD_FLAG_FUA));
    assert!(parse_request(&bytes[..27]).unwrap().is_none(), "a header not yet complete");
    assert!(parse_request(&[0; 28]).is_err(), "a bad magic");
    let mut out = Vec::new();
    push_reply(&mut out, 77, 0, b"abc");
    assert_eq!(out.len(), 16 + 3);
    assert_eq!(u64::from_be_bytes(out[8..16].try_into().unwrap()), 77);
    push_reply(&mut out, 78, EINVAL, b"ignored");
    assert_eq!(out.len(), 16 + 3 + 16, "an error reply carries no data; replies are gathered");
    assert_eq!(u64::from_be_bytes(out[27..35].try_into().unwrap()), 78);
}
