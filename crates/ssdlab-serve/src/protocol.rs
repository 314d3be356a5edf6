//! The NBD protocol's wire format, as the NBD project's `doc/proto.md` defines it: the fixed
//! newstyle handshake (option haggling with `NBD_OPT_EXPORT_NAME`, `NBD_OPT_INFO`, `NBD_OPT_GO`,
//! `NBD_OPT_LIST`, `NBD_OPT_ABORT`), then transmission with simple replies. Everything here is
//! generic over `Read` / `Write`, so the tests drive it through in-memory buffers.
//!
//! Every length a peer sends is checked before anything is allocated for it: a hostile or broken
//! client ends its own connection with an error, never the server.

use std::io::{self, Read, Write};

pub const NBDMAGIC: u64 = 0x4e42_444d_4147_4943;
pub const IHAVEOPT: u64 = 0x4948_4156_454F_5054;
const OPTION_REPLY_MAGIC: u64 = 0x0003_e889_0455_65a9;
pub const REQUEST_MAGIC: u32 = 0x2560_9513;
const SIMPLE_REPLY_MAGIC: u32 = 0x6744_6698;

const FLAG_FIXED_NEWSTYLE: u16 = 1 << 0;
const FLAG_NO_ZEROES: u16 = 1 << 1;
const CLIENT_FLAG_FIXED_NEWSTYLE: u32 = 1 << 0;
const CLIENT_FLAG_NO_ZEROES: u32 = 1 << 1;

/// The options a client may send while haggling (`NBD_OPT_*`) that the server takes up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    ExportName,
    Abort,
    List,
    Info,
    Go,
}

impl Opt {
    fn from_code(code: u32) -> Option<Opt> {
        Some(match code {
            1 => Opt::ExportName,
            2 => Opt::Abort,
            3 => Opt::List,
            6 => Opt::Info,
            7 => Opt::Go,
            _ => return None,
        })
    }
}

const REP_ACK: u32 = 1;
const REP_SERVER: u32 = 2;
const REP_INFO: u32 = 3;
const REP_ERR_UNSUP: u32 = (1 << 31) + 1;
const REP_ERR_INVALID: u32 = (1 << 31) + 3;

const INFO_EXPORT: u16 = 0;
const INFO_BLOCK_SIZE: u16 = 3;

/// Transmission flags (`NBD_FLAG_*` of the export).
pub const FLAG_HAS_FLAGS: u16 = 1 << 0;
pub const FLAG_READ_ONLY: u16 = 1 << 1;
pub const FLAG_SEND_FLUSH: u16 = 1 << 2;
pub const FLAG_SEND_FUA: u16 = 1 << 3;
pub const FLAG_SEND_TRIM: u16 = 1 << 5;
pub const FLAG_SEND_WRITE_ZEROES: u16 = 1 << 6;
pub const FLAG_CAN_MULTI_CONN: u16 = 1 << 8;

/// Command flag: force unit access (the write is durable before its reply).
pub const CMD_FLAG_FUA: u16 = 1 << 0;

/// Error values of replies (Linux errno numbers, as the protocol specifies).
pub const EPERM: u32 = 1;
pub const EIO: u32 = 5;
pub const EINVAL: u32 = 22;
pub const ENOSPC: u32 = 28;
pub const ENOTSUP: u32 = 95;

/// Option payloads longer than this are refused (an export name is at most 4 KiB).
const MAX_OPTION_BYTES: u32 = 64 * 1024;
/// The largest request payload accepted; clients learn it from `NBD_INFO_BLOCK_SIZE`.
pub const MAX_REQUEST_BYTES: u32 = 32 * 1024 * 1024;
/// Requests must be aligned to, and sized in, this many bytes (one sector).
pub const BLOCK_BYTES: u32 = 512;

/// What the server tells a client about the export.
#[derive(Clone, Copy, Debug)]
pub struct Export {
    pub size_bytes: u64,
    pub flags: u16,
}

/// How a handshake ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Handshake {
    /// The client chose the export: transmission follows.
    Transmission,
    /// The client aborted or only listed exports.
    Closed,
}

/// Runs the server side of the fixed newstyle handshake on `stream`.
pub fn handshake<S: Read + Write>(stream: &mut S, export: Export) -> io::Result<Handshake> {
    let mut hello = Vec::with_capacity(18);
    hello.extend_from_slice(&NBDMAGIC.to_be_bytes());
    hello.extend_from_slice(&IHAVEOPT.to_be_bytes());
    hello.extend_from_slice(&(FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES).to_be_bytes());
    stream.write_all(&hello)?;
    stream.flush()?;
    let client_flags = read_u32(stream)?;
    if client_flags & CLIENT_FLAG_FIXED_NEWSTYLE == 0 {
        return Err(invalid("the client does not speak the fixed newstyle handshake"));
    }
    let no_zeroes = client_flags & CLIENT_FLAG_NO_ZEROES != 0;
    loop {
        if read_u64(stream)? != IHAVEOPT {
            return Err(invalid("an option without the IHAVEOPT magic"));
        }
        let option = read_u32(stream)?;
        let length = read_u32(stream)?;
        if length > MAX_OPTION_BYTES {
            return Err(invalid(&format!("an option of {length} bytes (at most {MAX_OPTION_BYTES})")));
        }
        let mut data = vec![0; length as usize];
        stream.read_exact(&mut data)?;
        match Opt::from_code(option) {
            Some(Opt::ExportName) => {
                // No reply header: the export's size and flags, then (unless the client asked
                // for none) 124 zero bytes.
                let mut reply = Vec::with_capacity(134);
                reply.extend_from_slice(&export.size_bytes.to_be_bytes());
                reply.extend_from_slice(&export.flags.to_be_bytes());
                if !no_zeroes {
                    reply.extend_from_slice(&[0; 124]);
                }
                stream.write_all(&reply)?;
                stream.flush()?;
                return Ok(Handshake::Transmission);
            }
            Some(Opt::Abort) => {
                option_reply(stream, option, REP_ACK, &[])?;
                return Ok(Handshake::Closed);
            }
            Some(Opt::List) => {
                if length != 0 {
                    option_reply(stream, option, REP_ERR_INVALID, b"NBD_OPT_LIST carries no data")?;
                    continue;
                }
                // One export, with the empty (default) name.
                option_reply(stream, option, REP_SERVER, &0u32.to_be_bytes())?;
                option_reply(stream, option, REP_ACK, &[])?;
            }
            Some(kind @ (Opt::Info | Opt::Go)) => match parse_info_request(&data) {
                Some(requests) => {
                    let mut info = Vec::with_capacity(12);
                    info.extend_from_slice(&INFO_EXPORT.to_be_bytes());
                    info.extend_from_slice(&export.size_bytes.to_be_bytes());
                    info.extend_from_slice(&export.flags.to_be_bytes());
                    option_reply(stream, option, REP_INFO, &info)?;
                    if requests.contains(&INFO_BLOCK_SIZE) {
                        let mut sizes = Vec::with_capacity(14);
                        sizes.extend_from_slice(&INFO_BLOCK_SIZE.to_be_bytes());
                        sizes.extend_from_slice(&BLOCK_BYTES.to_be_bytes());
                        sizes.extend_from_slice(&4096u32.to_be_bytes());
                        sizes.extend_from_slice(&MAX_REQUEST_BYTES.to_be_bytes());
                        option_reply(stream, option, REP_INFO, &sizes)?;
                    }
                    option_reply(stream, option, REP_ACK, &[])?;
                    if kind == Opt::Go {
                        return Ok(Handshake::Transmission);
                    }
                }
                None => option_reply(stream, option, REP_ERR_INVALID, b"malformed NBD_OPT_INFO/GO data")?,
            },
            _ => option_reply(stream, option, REP_ERR_UNSUP, b"option not supported")?,
        }
    }
}

/// The information requests of an `NBD_OPT_INFO` / `NBD_OPT_GO` payload (name length, name,
/// count, requests), or `None` when it is malformed. Any name selects the one export.
fn parse_info_request(data: &[u8]) -> Option<Vec<u16>> {
    let name_len = u32::from_be_bytes(data.get(0..4)?.try_into().ok()?) as usize;
    let rest = data.get(4usize.checked_add(name_len)?..)?;
    let count = u16::from_be_bytes(rest.get(0..2)?.try_into().ok()?) as usize;
    let items = rest.get(2..)?;
    if items.len() != count * 2 {
        return None;
    }
    Some(items.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect())
}

fn option_reply<W: Write>(stream: &mut W, option: u32, kind: u32, data: &[u8]) -> io::Result<()> {
    let mut reply = Vec::with_capacity(20 + data.len());
    reply.extend_from_slice(&OPTION_REPLY_MAGIC.to_be_bytes());
    reply.extend_from_slice(&option.to_be_bytes());
    reply.extend_from_slice(&kind.to_be_bytes());
    reply.extend_from_slice(&(data.len() as u32).to_be_bytes());
    reply.extend_from_slice(data);
    stream.write_all(&reply)?;
    stream.flush()
}

/// Transmission commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    Read,
    Write,
    Disconnect,
    Flush,
    Trim,
    WriteZeroes,
    /// Any other command type (answered with `ENOTSUP`).
    Other(u16),
}

impl Command {
    fn from_type(kind: u16) -> Self {
        match kind {
            0 => Command::Read,
            1 => Command::Write,
            2 => Command::Disconnect,
            3 => Command::Flush,
            4 => Command::Trim,
            6 => Command::WriteZeroes,
            other => Command::Other(other),
        }
    }
}

/// A request header of the transmission phase (a write's payload follows it on the wire).
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub flags: u16,
    pub command: Command,
    /// The client's name for the request, echoed in the reply.
    pub cookie: u64,
    pub offset: u64,
    pub length: u32,
}

/// The bytes of a request header.
pub const REQUEST_HEADER_BYTES: usize = 28;
/// The bytes of a simple reply's header.
pub const REPLY_HEADER_BYTES: usize = 16;

/// Parses the request header at the start of `bytes` (a write's payload follows it);
/// `Ok(None)` while fewer than [`REQUEST_HEADER_BYTES`] have arrived.
pub fn parse_request(bytes: &[u8]) -> io::Result<Option<Request>> {
    let Some(header) = bytes.get(..REQUEST_HEADER_BYTES) else { return Ok(None) };
    let be_u16 = |at: usize| u16::from_be_bytes([header[at], header[at + 1]]);
    let be_u32 = |at: usize| u32::from_be_bytes(header[at..at + 4].try_into().expect("4 bytes"));
    let be_u64 = |at: usize| u64::from_be_bytes(header[at..at + 8].try_into().expect("8 bytes"));
    let magic = be_u32(0);
    if magic != REQUEST_MAGIC {
        return Err(invalid(&format!("a request with magic {magic:#x}")));
    }
    Ok(Some(Request {
        flags: be_u16(4),
        command: Command::from_type(be_u16(6)),
        cookie: be_u64(8),
        offset: be_u64(16),
        length: be_u32(24),
    }))
}

/// Appends a simple reply to `out`: `error` 0 and a read's `data`, or an error with none.
/// Replies are gathered and written together: each write wakes the client, which costs more
/// than the copy.
pub fn push_reply(out: &mut Vec<u8>, cookie: u64, error: u32, data: &[u8]) {
    let payload = if error == 0 { data } else { &[] };
    out.reserve(REPLY_HEADER_BYTES + payload.len());
    out.extend_from_slice(&SIMPLE_REPLY_MAGIC.to_be_bytes());
    out.extend_from_slice(&error.to_be_bytes());
    out.extend_from_slice(&cookie.to_be_bytes());
    out.extend_from_slice(payload);
}

fn read_u32<R: Read>(stream: &mut R) -> io::Result<u32> {
    let mut b = [0; 4];
    stream.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}

fn read_u64<R: Read>(stream: &mut R) -> io::Result<u64> {
    let mut b = [0; 8];
    stream.read_exact(&mut b)?;
    Ok(u64::from_be_bytes(b))
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

#[cfg(test)]
mod tests;
