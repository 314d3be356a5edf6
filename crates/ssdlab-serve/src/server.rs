//! The server: a listener, a reader and a writer thread per connection, and the device loop
//! that owns the model and paces its replies.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ssdlab_core::config::{Config, FlowKind};
use ssdlab_core::device::{HostRequest, Op, Status};
use ssdlab_core::stats::Results;
use ssdlab_core::{Device, SimError};

use crate::protocol::{self, Command, Export, Handshake, Request};

/// Where the server listens.
#[derive(Clone, Debug)]
pub enum Listen {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

/// How the model's clock relates to the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pace {
    /// Simulated time follows the wall clock; a reply leaves at its simulated completion.
    RealTime,
    /// Replies leave as soon as the model has processed them (functional use).
    None,
}

#[derive(Clone, Debug)]
pub struct ServeOptions {
    pub listen: Listen,
    pub pace: Pace,
    pub read_only: bool,
    /// Binding a TCP address other than loopback needs this.
    pub allow_remote: bool,
    /// Connections served at once; more are closed at accept.
    pub max_connections: usize,
    /// Requests in flight per connection; its reader waits beyond that.
    pub max_in_flight: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("{0}")]
    Listen(String),
    #[error("the device stopped: {0}")]
    Device(String),
}

/// What a stopped server hands back: the results document and the live section beside it.
pub struct ServeReport {
    pub results: Results,
    /// `connections`, `requests`, `refused`, `pace`, `pacing_error_us` (percentiles of the wall
    /// clock's reply time minus the simulated completion, real-time pacing only).
    pub live: serde_json::Value,
}

/// A request from a connection to the device loop.
enum Message {
    /// A connection finished its handshake: replies go to `stream`, and each one frees a place
    /// in `in_flight`.
    Opened {
        conn: u32,
        stream: Box<dyn Stream>,
        in_flight: Arc<InFlight>,
    },
    /// `error`: the protocol error the reader found (0: the device serves it).
    Request {
        conn: u32,
        request: Request,
        data: Option<Vec<u8>>,
        error: u32,
        /// When its header was read: real-time pacing submits it at that moment, so the hand-off
        /// to the device thread does not count as the host's time.
        arrived: Instant,
    },
    Closed {
        conn: u32,
    },
}

/// A request in the device: whose it is, and whether a flush must follow it (FUA).
struct Pending {
    conn: u32,
    cookie: u64,
    then_flush: bool,
}

/// Serves the device `config` describes until `should_stop` says so (polled every 50 ms).
/// Its `kind = "host"` flows are the connections' queues (`Config::served_from_json_str` adds
/// them); its other flows run beside them.
/// `on_ready` gets the address once the listener is bound.
pub fn serve(
    mut config: Config,
    base_dir: &Path,
    options: &ServeOptions,
    should_stop: &mut dyn FnMut() -> bool,
    on_ready: &mut dyn FnMut(&str),
) -> Result<ServeReport, ServeError> {
    config.data.emulate = true;
    let queues = config.flows.iter().filter(|f| f.kind == FlowKind::Host).count();
    let mut device = Device::new(config, base_dir)?;
    let export = Export {
        size_bytes: device.logical_sectors() * 512,
        flags: protocol::FLAG_HAS_FLAGS
            | protocol::FLAG_SEND_FLUSH
            | protocol::FLAG_SEND_FUA
            | protocol::FLAG_SEND_TRIM
            | protocol::FLAG_SEND_WRITE_ZEROES
            | protocol::FLAG_CAN_MULTI_CONN
            | if options.read_only { protocol::FLAG_READ_ONLY } else { 0 },
    };
    let (messages, inbox) = mpsc::channel();
    let stop = Arc::new(AtomicBool::new(false));
    let listener = bind(options)?;
    on_ready(&listener.address());
    let acceptor = {
        let (stop, options) = (stop.clone(), options.clone());
        thread::spawn(move || accept_loop(listener, export, queues, &options, messages, &stop))
    };
    let outcome = DeviceLoop::new(&mut device, options.pace).run(&inbox, should_stop);
    stop.store(true, Ordering::SeqCst);
    let _ = acceptor.join();
    let (requests, refused, errors_us) = outcome?;
    if device.has_backing_file() {
        device.persist().map_err(ServeError::Device)?;
    }
    let results = device.results();
    let live = serde_json::json!({
        "pace": match options.pace { Pace::RealTime => "real-time", Pace::None => "none" },
        "connections": queues,
        "requests": requests,
        "refused": refused,
        "pacing_error_us": percentiles(errors_us),
    });
    Ok(ServeReport { results, live })
}

enum Listener {
    Unix(UnixListener, PathBuf),
    Tcp(TcpListener),
}

impl Listener {
    fn address(&self) -> String {
        match self {
            Listener::Unix(_, path) => format!("unix:{}", path.display()),
            Listener::Tcp(l) => l.local_addr().map(|a| format!("tcp:{a}")).unwrap_or_default(),
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn bind(options: &ServeOptions) -> Result<Listener, ServeError> {
    let listener = match &options.listen {
        Listen::Unix(path) => {
            if path.exists() {
                return Err(ServeError::Listen(format!(
                    "{}: already exists (another server, or a stale socket to remove)",
                    path.display()
                )));
            }
            let l = UnixListener::bind(path).map_err(|e| ServeError::Listen(format!("{}: {e}", path.display())))?;
            Listener::Unix(l, path.clone())
        }
        Listen::Tcp(addr) => {
            if !addr.ip().is_loopback() && !options.allow_remote {
                return Err(ServeError::Listen(format!(
                    "listen: {addr} is not a loopback address; the device has no authentication, so pass --allow-remote to serve it to other machines"
                )));
            }
            Listener::Tcp(TcpListener::bind(addr).map_err(|e| ServeError::Listen(format!("{addr}: {e}")))?)
        }
    };
    match &listener {
        Listener::Unix(l, _) => l.set_nonblocking(true),
        Listener::Tcp(l) => l.set_nonblocking(true),
    }
    .map_err(|e| ServeError::Listen(e.to_string()))?;
    Ok(listener)
}

/// A connection's stream, whichever kind.
trait Stream: Read + Write + Send + 'static {
    fn duplicate(&self) -> io::Result<Box<dyn Stream>>;
    fn close(&self);
    /// Replies are written by the device loop: a client that stops reading them for this long
    /// loses its connection instead of stalling every other one.
    fn limit_write_time(&self) -> io::Result<()>;
}

const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Unix and TCP sockets are served alike.
macro_rules! impl_stream {
    ($($socket:ty),*) => {$(
        impl Stream for $socket {
            fn duplicate(&self) -> io::Result<Box<dyn Stream>> {
                Ok(Box::new(self.try_clone()?))
            }
            fn close(&self) {
                let _ = self.shutdown(std::net::Shutdown::Both);
            }
            fn limit_write_time(&self) -> io::Result<()> {
                self.set_write_timeout(Some(WRITE_TIMEOUT))
            }
        }
    )*};
}

impl_stream!(UnixStream, TcpStream);

fn accept_loop(
    listener: Listener,
    export: Export,
    queues: usize,
    options: &ServeOptions,
    messages: Sender<Message>,
    stop: &AtomicBool,
) {
    let slots: Arc<Mutex<Vec<bool>>> = Arc::new(Mutex::new(vec![false; queues.min(options.max_connections.max(1))]));
    let mut open: Vec<(Box<dyn Stream>, thread::JoinHandle<()>)> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let accepted: io::Result<Box<dyn Stream>> = match &listener {
            Listener::Unix(l, _) => l.accept().map(|(s, _)| Box::new(s) as Box<dyn Stream>),
            Listener::Tcp(l) => l.accept().map(|(s, _)| {
                let _ = s.set_nodelay(true);
                Box::new(s) as Box<dyn Stream>
            }),
        };
        let stream = match accepted {
            Ok(s) => s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(20));
                continue;
            }
            Err(_) => continue,
        };
        let slot = {
            let mut s = slots.lock().expect("slots lock");
            let free = s.iter().position(|used| !used);
            if let Some(i) = free {
                s[i] = true;
            }
            free
        };
        let Some(slot) = slot else {
            stream.close(); // at the connection limit
            continue;
        };
        let Ok(closer) = stream.duplicate() else { continue };
        let (messages, slots, max_in_flight) = (messages.clone(), slots.clone(), options.max_in_flight.max(1));
        let handle = thread::spawn(move || {
            serve_connection(stream, slot as u32, export, max_in_flight, &messages);
            slots.lock().expect("slots lock")[slot] = false;
        });
        open.push((closer, handle));
        open.retain(|(_, h)| !h.is_finished());
    }
    for (stream, handle) in open {
        stream.close();
        let _ = handle.join();
    }
}

/// Counts a connection's requests in flight; its reader waits at the limit.
struct InFlight {
    count: Mutex<usize>,
    freed: Condvar,
    /// Set when the device loop has dropped the connection (its replies can no longer go out).
    closed: AtomicBool,
}

impl InFlight {
    /// Waits for room for one more request; false once the connection is closed.
    fn take(&self, limit: usize) -> bool {
        let mut n = self.count.lock().expect("in-flight lock");
        while *n >= limit && !self.closed.load(Ordering::SeqCst) {
            n = self.freed.wait(n).expect("in-flight lock");
        }
        *n += 1;
        !self.closed.load(Ordering::SeqCst)
    }

    fn release(&self) {
        let mut n = self.count.lock().expect("in-flight lock");
        *n = n.saturating_sub(1);
        self.freed.notify_one();
    }

    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let _n = self.count.lock().expect("in-flight lock");
        self.freed.notify_all();
    }
}

fn serve_connection(
    mut stream: Box<dyn Stream>,
    conn: u32,
    export: Export,
    max_in_flight: usize,
    messages: &Sender<Message>,
) {
    match protocol::handshake(&mut stream, export) {
        Ok(Handshake::Transmission) => {}
        _ => {
            // Aborted, or a broken handshake: this connection only (shut down, so that the
            // acceptor's copy of the socket does not keep it open).
            stream.close();
            return;
        }
    }
    let Ok(reply_stream) = stream.duplicate() else {
        stream.close();
        return;
    };
    if reply_stream.limit_write_time().is_err() {
        stream.close();
        return;
    }
    let in_flight = Arc::new(InFlight { count: Mutex::new(0), freed: Condvar::new(), closed: AtomicBool::new(false) });
    if messages.send(Message::Opened { conn, stream: reply_stream, in_flight: in_flight.clone() }).is_err() {
        return;
    }
    let read_only = export.flags & protocol::FLAG_READ_ONLY != 0;
    // Until the client closes, or its stream breaks (this connection only).
    while let Ok(Some(request)) = protocol::read_request(&mut stream) {
        let arrived = Instant::now();
        if request.command == Command::Disconnect {
            break;
        }
        let error = check(&request, export.size_bytes, read_only);
        let carries_data = request.command == Command::Write;
        let data = if carries_data {
            if request.length > protocol::MAX_REQUEST_BYTES {
                break; // the payload cannot be taken in: the connection ends
            }
            let mut data = vec![0; request.length as usize];
            if stream.read_exact(&mut data).is_err() {
                break;
            }
            Some(data)
        } else {
            None
        };
        if !in_flight.take(max_in_flight) {
            break; // the device loop dropped the connection
        }
        // A refused request goes through the device loop too, so that replies keep one writer.
        if messages.send(Message::Request { conn, request, data, error, arrived }).is_err() {
            break;
        }
    }
    let _ = messages.send(Message::Closed { conn });
    stream.close();
}

/// The protocol's error for a request the device must not see, or 0.
fn check(request: &Request, size_bytes: u64, read_only: bool) -> u32 {
    let writes = matches!(request.command, Command::Write | Command::Trim | Command::WriteZeroes);
    match request.command {
        Command::Other(_) => return protocol::ENOTSUP,
        Command::Flush => return 0,
        _ => {}
    }
    if writes && read_only {
        return protocol::EPERM;
    }
    let block = protocol::BLOCK_BYTES as u64;
    let length = request.length as u64;
    if length == 0
        || !request.offset.is_multiple_of(block)
        || !length.is_multiple_of(block)
        || length > protocol::MAX_REQUEST_BYTES as u64
    {
        return protocol::EINVAL;
    }
    if request.offset.checked_add(length).is_none_or(|end| end > size_bytes) {
        return if writes { protocol::ENOSPC } else { protocol::EINVAL };
    }
    0
}

/// The thread that owns the device: takes requests in, advances the model, sends replies.
struct DeviceLoop<'d> {
    device: &'d mut Device,
    pace: Pace,
    started: Instant,
    connections: HashMap<u32, (Box<dyn Stream>, Arc<InFlight>)>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    requests: u64,
    refused: u64,
    pacing_errors_us: Vec<f64>,
}

type Outcome = Result<(u64, u64, Vec<f64>), ServeError>;

/// How long before a due completion the real-time loop stops sleeping and spins.
const SPIN: Duration = Duration::from_micros(200);

impl<'d> DeviceLoop<'d> {
    fn new(device: &'d mut Device, pace: Pace) -> Self {
        Self {
            device,
            pace,
            started: Instant::now(),
            connections: HashMap::new(),
            pending: HashMap::new(),
            next_id: 0,
            requests: 0,
            refused: 0,
            pacing_errors_us: Vec::new(),
        }
    }

    /// Picoseconds of wall clock since the server started: the model's time under real-time pacing.
    fn wall_ps(&self) -> u64 {
        self.started.elapsed().as_nanos().min(u64::MAX as u128 / 1000) as u64 * 1000
    }

    fn run(mut self, inbox: &Receiver<Message>, should_stop: &mut dyn FnMut() -> bool) -> Outcome {
        let poll = Duration::from_millis(50);
        let mut last_poll = Instant::now();
        loop {
            if last_poll.elapsed() >= poll {
                last_poll = Instant::now();
                if should_stop() {
                    break;
                }
            }
            let wait = match (self.pace, self.device.next_event_time()) {
                (_, None) => poll,
                (Pace::None, Some(_)) => Duration::ZERO,
                (Pace::RealTime, Some(t)) => Duration::from_nanos(t.saturating_sub(self.wall_ps()) / 1000).min(poll),
            };
            // A sleeping thread wakes tens of microseconds late (the kernel's timer slack); under
            // real-time pacing the last stretch before a completion is spun instead.
            let spin = if self.pace == Pace::RealTime && self.device.next_event_time().is_some() {
                SPIN.min(wait)
            } else {
                Duration::ZERO
            };
            match inbox.recv_timeout(wait - spin) {
                Ok(message) => self.take(message)?,
                Err(RecvTimeoutError::Timeout) => {
                    let deadline = Instant::now() + spin;
                    while Instant::now() < deadline {
                        if let Ok(message) = inbox.try_recv() {
                            self.take(message)?;
                            break;
                        }
                        std::hint::spin_loop();
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
            while let Ok(message) = inbox.try_recv() {
                self.take(message)?;
            }
            self.advance()?;
        }
        // Stopping: what is in flight completes (at once, whatever the pace), then the replies go.
        while let Some(t) = self.device.next_event_time() {
            self.device.advance_to(t)?;
            self.deliver();
        }
        let open: Vec<u32> = self.connections.keys().copied().collect();
        for conn in open {
            self.drop_connection(conn);
        }
        Ok((self.requests, self.refused, self.pacing_errors_us))
    }

    fn take(&mut self, message: Message) -> Result<(), ServeError> {
        match message {
            Message::Opened { conn, stream, in_flight } => {
                self.connections.insert(conn, (stream, in_flight));
            }
            Message::Closed { conn } => self.drop_connection(conn),
            Message::Request { conn, request, error, .. } if error != 0 => {
                self.reply(conn, request.cookie, error, Vec::new());
            }
            Message::Request { conn, request, data, arrived, .. } => {
                if self.pace == Pace::RealTime {
                    // At its arrival, or now if the model has already passed that moment.
                    let since = arrived.saturating_duration_since(self.started).as_nanos();
                    self.device.advance_to(since.min(u64::MAX as u128 / 1000) as u64 * 1000)?;
                    self.deliver();
                }
                let (op, sectors) = match request.command {
                    Command::Read => (Op::Read, request.length / 512),
                    Command::Write => (Op::Write, request.length / 512),
                    Command::Trim => (Op::Trim, request.length / 512),
                    Command::WriteZeroes => (Op::WriteZeroes, request.length / 512),
                    _ => (Op::Flush, 0),
                };
                let start_sector = if op == Op::Flush { 0 } else { request.offset / 512 };
                self.submit(conn, request.cookie, op, start_sector, sectors, data.as_deref(), request.flags)?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn submit(
        &mut self,
        conn: u32,
        cookie: u64,
        op: Op,
        start_sector: u64,
        sectors: u32,
        data: Option<&[u8]>,
        flags: u16,
    ) -> Result<(), ServeError> {
        self.next_id += 1;
        let id = self.next_id;
        let request = HostRequest { id, queue: conn as u16, op, start_sector, sectors, data };
        match self.device.submit(&request) {
            Ok(()) => {
                self.requests += 1;
                let then_flush = flags & protocol::CMD_FLAG_FUA != 0 && op != Op::Read && op != Op::Flush;
                self.pending.insert(id, Pending { conn, cookie, then_flush });
            }
            Err(_) => {
                // Checked before, so this is a device limit (e.g. a trim the mapping cannot do).
                self.refused += 1;
                self.reply(conn, cookie, protocol::EINVAL, Vec::new());
            }
        }
        Ok(())
    }

    fn advance(&mut self) -> Result<(), ServeError> {
        match self.pace {
            Pace::None => {
                if let Some(t) = self.device.next_event_time() {
                    self.device.advance_to(t)?;
                }
            }
            Pace::RealTime => {
                let now = self.wall_ps();
                self.device.advance_to(now)?;
            }
        }
        self.deliver();
        Ok(())
    }

    /// Replies for the completions so far (a FUA write first gets its flush).
    fn deliver(&mut self) {
        let done: Vec<_> = self.device.completions().collect();
        for c in done {
            let Some(p) = self.pending.remove(&c.id) else { continue };
            if p.then_flush && c.status == Status::Success {
                let _ = self.submit(p.conn, p.cookie, Op::Flush, 0, 0, None, 0);
                continue;
            }
            if self.pace == Pace::RealTime {
                let late_ps = self.wall_ps() as f64 - c.completed_ps as f64;
                self.pacing_errors_us.push(late_ps / 1e6);
            }
            let error = match c.status {
                Status::Success => 0,
                Status::Unsupported => protocol::ENOTSUP,
            };
            if error == 0 && c.op == Op::Flush && self.device.has_backing_file() {
                // Durable before the reply: the image is written to the backing file.
                if self.device.persist().is_err() {
                    self.reply(p.conn, p.cookie, protocol::EIO, Vec::new());
                    continue;
                }
            }
            self.reply(p.conn, p.cookie, error, c.data.unwrap_or_default());
        }
    }

    fn reply(&mut self, conn: u32, cookie: u64, error: u32, data: Vec<u8>) {
        let Some((stream, in_flight)) = self.connections.get_mut(&conn) else { return };
        if protocol::write_reply(stream, cookie, error, &data).is_err() {
            self.drop_connection(conn); // gone, or not reading its replies
            return;
        }
        in_flight.release();
    }

    fn drop_connection(&mut self, conn: u32) {
        if let Some((stream, in_flight)) = self.connections.remove(&conn) {
            in_flight.close();
            stream.close();
        }
    }
}

/// p50, p90, p99 and max of `values` (empty: nulls).
fn percentiles(mut values: Vec<f64>) -> serde_json::Value {
    if values.is_empty() {
        return serde_json::json!({"count": 0, "p50": null, "p90": null, "p99": null, "max": null});
    }
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    serde_json::json!({"count": values.len(), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": at(1.0)})
}
