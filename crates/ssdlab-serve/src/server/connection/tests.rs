//! The connection's parsing and buffering against a real socket pair: requests cut at any
//! byte, writes larger than the read buffer, the in-flight limit, and how connections end.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Instant;

use super::*;
use crate::protocol::{REQUEST_HEADER_BYTES, REQUEST_MAGIC};

const SIZE_BYTES: u64 = 1 << 30;

fn header(kind: u16, cookie: u64, offset: u64, length: u32) -> Vec<u8> {
    let mut h = REQUEST_MAGIC.to_be_bytes().to_vec();
    h.extend_from_slice(&0u16.to_be_bytes());
    h.extend_from_slice(&kind.to_be_bytes());
    h.extend_from_slice(&cookie.to_be_bytes());
    h.extend_from_slice(&offset.to_be_bytes());
    h.extend_from_slice(&length.to_be_bytes());
    h
}

fn pair() -> (Connection, UnixStream) {
    let (server, client) = UnixStream::pair().unwrap();
    server.set_nonblocking(true).unwrap();
    (Connection::new(Box::new(server), 1), client)
}

fn take(c: &mut Connection, max_in_flight: usize) -> Result<Vec<Parsed>, End> {
    let mut out = Vec::new();
    c.take_requests(&mut out, max_in_flight, SIZE_BYTES, false)?;
    Ok(out)
}

#[test]
fn requests_cut_at_every_byte_parse_whole() {
    let (mut c, mut client) = pair();
    let mut wire = header(0, 1, 4096, 4096);
    wire.extend(header(1, 2, 0, 512));
    wire.extend(vec![7u8; 512]);
    wire.extend(header(3, 3, 0, 0));
    let mut got = Vec::new();
    for byte in &wire {
        client.write_all(&[*byte]).unwrap();
        c.readable = true;
        got.extend(take(&mut c, 128).unwrap());
    }
    let cookies: Vec<u64> = got.iter().map(|p| p.request.cookie).collect();
    assert_eq!(cookies, [1, 2, 3]);
    assert_eq!(got[1].data.as_deref(), Some(&[7u8; 512][..]));
    assert!(got.iter().all(|p| p.error == 0));
    assert_eq!(c.in_flight, 3);
}

#[test]
fn a_write_larger_than_the_buffer_arrives_intact() {
    let (mut c, client) = pair();
    let length = 3 * READ_CHUNK + 512;
    let payload: Vec<u8> = (0..length).map(|i| (i % 251) as u8).collect();
    let mut wire = header(1, 9, 0, length as u32);
    wire.extend(&payload);
    let writer = std::thread::spawn(move || {
        let mut client = client;
        client.write_all(&wire).unwrap();
        client
    });
    let mut got = Vec::new();
    while got.is_empty() {
        c.readable = true;
        got = take(&mut c, 128).unwrap();
    }
    let _client = writer.join().unwrap();
    assert_eq!(got[0].data.as_deref(), Some(&payload[..]));
}

#[test]
fn the_in_flight_limit_holds_requests_until_a_reply() {
    let (mut c, mut client) = pair();
    for cookie in 0..5 {
        client.write_all(&header(0, cookie, 0, 4096)).unwrap();
    }
    assert_eq!(take(&mut c, 2).unwrap().len(), 2);
    assert!(take(&mut c, 2).unwrap().is_empty(), "at the limit");
    assert!(!c.wants_service(2));
    c.reply(0, 0, &[0; 4096]);
    assert!(c.wants_service(2), "room again, and a request is buffered");
    assert_eq!(take(&mut c, 2).unwrap()[0].request.cookie, 2);
    c.flush(Instant::now()).unwrap();
    let mut reply = [0u8; 16 + 4096];
    client.read_exact(&mut reply).unwrap();
    assert_eq!(u64::from_be_bytes(reply[8..16].try_into().unwrap()), 0);
}

#[test]
fn requests_the_device_must_not_see_carry_their_error() {
    let (mut c, mut client) = pair();
    client.write_all(&header(0, 1, SIZE_BYTES, 4096)).unwrap();
    client.write_all(&header(0, 2, 100, 4096)).unwrap();
    client.write_all(&header(9, 3, 0, 4096)).unwrap();
    let errors: Vec<u32> = take(&mut c, 128).unwrap().iter().map(|p| p.error).collect();
    assert_eq!(errors, [protocol::EINVAL, protocol::EINVAL, protocol::ENOTSUP]);
}

#[test]
fn disconnect_closes_and_bad_input_breaks() {
    let (mut c, mut client) = pair();
    client.write_all(&header(2, 1, 0, 0)).unwrap();
    assert!(matches!(take(&mut c, 128), Err(End::Closed)));

    let (mut c, mut client) = pair();
    client.write_all(&[0u8; REQUEST_HEADER_BYTES]).unwrap();
    assert!(matches!(take(&mut c, 128), Err(End::Broken)), "a bad magic");

    let (mut c, mut client) = pair();
    client.write_all(&header(1, 1, 0, protocol::MAX_REQUEST_BYTES + 512)).unwrap();
    assert!(matches!(take(&mut c, 128), Err(End::Broken)), "a payload beyond the limit");

    let (mut c, client) = pair();
    drop(client);
    assert!(matches!(take(&mut c, 128), Err(End::Closed)), "the client went away");
}

#[test]
fn replies_wait_on_a_full_socket_and_go_when_it_drains() {
    let (mut c, mut client) = pair();
    let data = vec![1u8; 64 * 1024];
    for cookie in 0..64 {
        c.in_flight += 1;
        c.reply(cookie, 0, &data);
    }
    let now = Instant::now();
    c.flush(now).unwrap();
    assert!(c.has_output() && c.stalled_since == Some(now), "4 MiB do not fit a socket buffer");
    let reader = std::thread::spawn(move || {
        let mut all = vec![0u8; 64 * (16 + 64 * 1024)];
        client.read_exact(&mut all).unwrap();
        all
    });
    while c.has_output() {
        c.flush(Instant::now()).unwrap();
    }
    let all = reader.join().unwrap();
    assert_eq!(u64::from_be_bytes(all[8..16].try_into().unwrap()), 0);
    assert!(c.stalled_since.is_none());
}
