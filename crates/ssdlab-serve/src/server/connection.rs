//! One client connection in its transmission phase, served by the device loop without
//! blocking: the bytes read and not yet parsed, and the replies not yet written.
//!
//! Reads and writes are batched: at queue depth 32 one read usually brings several requests and
//! one write carries several replies, and on a virtual machine each system call and each wake-up
//! of the client costs more than the model's work for a request.

use std::io::{self, ErrorKind};
use std::time::Instant;

use super::Stream;
use crate::protocol::{self, Command, Request};

/// Bytes read per call, and the input buffer's size until a larger write needs more.
const READ_CHUNK: usize = 256 * 1024;
/// A connection whose unwritten replies exceed this is not read from until they drain (a
/// client that stops reading its replies cannot make the server hold unbounded memory).
pub const OUTPUT_LIMIT: usize = 64 * 1024 * 1024;

/// A request taken off the wire: its header, a write's payload, and the protocol error it gets
/// without reaching the device (0: the device serves it).
pub struct Parsed {
    pub request: Request,
    pub data: Option<Vec<u8>>,
    pub error: u32,
}

/// Why a connection ends.
#[derive(Debug)]
pub enum End {
    /// The client closed it, sent `NBD_CMD_DISC`, or the socket failed.
    Closed,
    /// The client broke the protocol (bad magic, a payload beyond the limit).
    Broken,
}

pub struct Connection {
    pub stream: Box<dyn Stream>,
    /// Distinguishes this connection from earlier ones on the same queue, so that a reply of a
    /// closed connection never reaches its successor.
    pub generation: u64,
    input: Vec<u8>,
    /// `input[head..tail]` is read and not yet parsed.
    head: usize,
    tail: usize,
    output: Vec<u8>,
    sent: usize,
    /// The socket may hold more bytes (edge-triggered readiness: set by an event, cleared when a
    /// read would block).
    pub readable: bool,
    pub in_flight: usize,
    /// Since when unwritten replies have waited on a full socket.
    pub stalled_since: Option<Instant>,
}

impl Connection {
    pub fn new(stream: Box<dyn Stream>, generation: u64) -> Self {
        Self {
            stream,
            generation,
            input: vec![0; READ_CHUNK],
            head: 0,
            tail: 0,
            output: Vec::new(),
            sent: 0,
            readable: true, // bytes may have arrived before the device loop took the connection
            in_flight: 0,
            stalled_since: None,
        }
    }

    /// Whether the connection may take another request.
    pub fn has_room(&self, max_in_flight: usize) -> bool {
        self.in_flight < max_in_flight && self.output.len() - self.sent < OUTPUT_LIMIT
    }

    /// Whether a request is waiting that the connection has room for.
    pub fn wants_service(&self, max_in_flight: usize) -> bool {
        self.has_room(max_in_flight) && (self.readable || self.complete_request_buffered())
    }

    fn complete_request_buffered(&self) -> bool {
        match protocol::parse_request(&self.input[self.head..self.tail]) {
            Ok(Some(r)) => self.tail - self.head >= protocol::REQUEST_HEADER_BYTES + payload_bytes(&r),
            Ok(None) => false,
            Err(_) => true, // parsing it ends the connection
        }
    }

    /// Takes the requests the connection has room for into `out`, reading the socket as long as
    /// it has bytes; `size_bytes` and `read_only` decide each request's protocol error.
    pub fn take_requests(
        &mut self,
        out: &mut Vec<Parsed>,
        max_in_flight: usize,
        size_bytes: u64,
        read_only: bool,
    ) -> Result<(), End> {
        while self.has_room(max_in_flight) {
            if let Some(parsed) = self.parse_one(size_bytes, read_only)? {
                self.in_flight += 1;
                out.push(parsed);
                continue;
            }
            if !self.readable {
                break;
            }
            self.fill()?;
        }
        Ok(())
    }

    /// The next complete request in the buffer, if one is there.
    fn parse_one(&mut self, size_bytes: u64, read_only: bool) -> Result<Option<Parsed>, End> {
        let buffered = &self.input[self.head..self.tail];
        let Some(request) = protocol::parse_request(buffered).map_err(|_| End::Broken)? else {
            return Ok(None);
        };
        if request.command == Command::Disconnect {
            return Err(End::Closed);
        }
        let payload = payload_bytes(&request);
        if request.command == Command::Write && request.length > protocol::MAX_REQUEST_BYTES {
            return Err(End::Broken); // the payload cannot be taken in
        }
        let whole = protocol::REQUEST_HEADER_BYTES + payload;
        if buffered.len() < whole {
            if self.input.len() - self.head < whole {
                // A large write: room for all of it after what is parsed.
                let grown = (self.head + whole).next_multiple_of(READ_CHUNK);
                self.input.resize(grown, 0);
            }
            return Ok(None);
        }
        let body = self.head + protocol::REQUEST_HEADER_BYTES;
        let data = (payload > 0).then(|| self.input[body..body + payload].to_vec());
        self.head += whole;
        if self.head == self.tail {
            (self.head, self.tail) = (0, 0);
        }
        let error = super::check(&request, size_bytes, read_only);
        Ok(Some(Parsed { request, data, error }))
    }

    /// One read from the socket into the buffer (moving what is unparsed to its front first if
    /// the buffer is full).
    fn fill(&mut self) -> Result<(), End> {
        if self.tail == self.input.len() {
            self.input.copy_within(self.head..self.tail, 0);
            (self.head, self.tail) = (0, self.tail - self.head);
            if self.tail == self.input.len() {
                self.input.resize(self.input.len() + READ_CHUNK, 0);
            }
        }
        let room = self.input.len() - self.tail;
        match self.stream.read(&mut self.input[self.tail..]) {
            Ok(0) => Err(End::Closed),
            Ok(n) => {
                self.tail += n;
                // A short read drained the socket; bytes arriving later raise a new readiness
                // event, so the read that would only say "would block" is saved.
                if n < room {
                    self.readable = false;
                }
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                self.readable = false;
                Ok(())
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => Ok(()),
            Err(_) => Err(End::Closed),
        }
    }

    /// Queues a reply; it frees the request's place.
    pub fn reply(&mut self, cookie: u64, error: u32, data: &[u8]) {
        self.in_flight = self.in_flight.saturating_sub(1);
        protocol::push_reply(&mut self.output, cookie, error, data);
    }

    /// Writes queued replies until done or the socket is full; `Err` if the socket failed.
    pub fn flush(&mut self, now: Instant) -> io::Result<()> {
        while self.sent < self.output.len() {
            match self.stream.write(&self.output[self.sent..]) {
                Ok(0) => return Err(io::Error::new(ErrorKind::WriteZero, "the client closed")),
                Ok(n) => {
                    self.sent += n;
                    self.stalled_since = None;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.stalled_since.get_or_insert(now);
                    return Ok(());
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.output.clear();
        self.sent = 0;
        if self.output.capacity() > 4 * READ_CHUNK {
            self.output.shrink_to(READ_CHUNK); // after a burst of large reads
        }
        Ok(())
    }

    pub fn has_output(&self) -> bool {
        self.sent < self.output.len()
    }
}

/// Bytes of payload that follow `request`'s header on the wire (a write's data).
fn payload_bytes(request: &Request) -> usize {
    if request.command == Command::Write {
        request.length as usize
    } else {
        0
    }
}

#[cfg(test)]
mod tests;
