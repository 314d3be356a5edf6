//! The server: an acceptor thread (handshakes and control commands on their own short-lived
//! threads) and the device loop, one thread that owns the model and every connection's socket.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use ssdlab_core::config::{Config, FlowKind};
use ssdlab_core::stats::Results;
use ssdlab_core::{Device, SimError};

use crate::protocol::{self, Command, Export, Handshake, Request};

mod connection;
mod device_loop;

use device_loop::DeviceLoop;

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
    /// Requests in flight per connection; the server reads no further requests beyond that.
    pub max_in_flight: usize,
    /// A unix socket taking control commands (`results`, `stop`) independently of the clients.
    pub control: Option<PathBuf>,
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

/// What the server hands back, when it stops and on request while it runs: the results
/// document and the live section beside it.
pub struct ServeReport {
    pub results: Results,
    /// `connections`, `requests`, `refused`, `pace`, `pacing_error_us` (percentiles of the wall
    /// clock's reply time minus the simulated completion, real-time pacing only).
    pub live: serde_json::Value,
}

/// What the host process (the CLI, Python) tells the server when polled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Stop,
    /// Hand a snapshot of the results to [`Host::snapshot`] and go on serving.
    Snapshot,
}

/// Whoever runs the server: told when it listens, polled every 50 ms, handed snapshots.
pub trait Host {
    /// The listener is bound at `address` (`unix:PATH` or `tcp:HOST:PORT`).
    fn ready(&mut self, address: &str);
    /// Go on, stop, or take a snapshot (the CLI maps SIGINT / SIGTERM and SIGUSR1 to these).
    fn poll(&mut self) -> Control;
    /// The results so far, on request (a [`Control::Snapshot`] or the control socket's
    /// `results`); the server goes on serving.
    fn snapshot(&mut self, report: &ServeReport);
}

/// A command read from the control socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ControlCommand {
    Results,
    Stop,
}

/// From the acceptor's threads to the device loop.
pub(crate) enum Message {
    /// A connection finished its handshake: its stream (non-blocking from now on) is the host
    /// queue `queue`.
    Opened { queue: usize, stream: Box<dyn Stream> },
    /// A control command; the answer (one JSON document) goes back on `answer`.
    Control { command: ControlCommand, answer: Sender<String> },
}

/// Serves the device `config` describes until `host` or the control socket says stop.
/// Its `kind = "host"` flows are the connections' queues (`Config::served_from_json_str` adds
/// them); its other flows run beside them.
pub fn serve(
    mut config: Config,
    base_dir: &Path,
    options: &ServeOptions,
    host: &mut dyn Host,
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
    let listener = bind(options)?;
    let control = options.control.as_deref().map(bind_control).transpose()?;
    let slots = Arc::new(Mutex::new(vec![false; queues.min(options.max_connections.max(1))]));
    let (messages, inbox) = mpsc::channel();
    let device_loop = DeviceLoop::new(&mut device, options, export, slots.clone())?;
    let waker = device_loop.waker()?;
    host.ready(&listener.address());
    let stop = Arc::new(AtomicBool::new(false));
    let acceptor = {
        let stop = stop.clone();
        let acceptor = Acceptor { export, slots, messages, waker };
        thread::spawn(move || acceptor.run(listener, control, &stop))
    };
    let outcome = device_loop.run(&inbox, host);
    stop.store(true, Ordering::SeqCst);
    let _ = acceptor.join();
    let report = outcome?;
    if device.has_backing_file() {
        device.persist().map_err(ServeError::Device)?;
    }
    Ok(report)
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

    /// A waiting connection, if any (the listener is non-blocking).
    fn accept(&self) -> io::Result<Box<dyn Stream>> {
        match self {
            Listener::Unix(l, _) => l.accept().map(|(s, _)| Box::new(s) as Box<dyn Stream>),
            Listener::Tcp(l) => l.accept().map(|(s, _)| {
                let _ = s.set_nodelay(true);
                Box::new(s) as Box<dyn Stream>
            }),
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

fn bind_unix(path: &Path, what: &str) -> Result<UnixListener, ServeError> {
    if path.exists() {
        return Err(ServeError::Listen(format!(
            "{what} {}: already exists (another server, or a stale socket to remove)",
            path.display()
        )));
    }
    let listener =
        UnixListener::bind(path).map_err(|e| ServeError::Listen(format!("{what} {}: {e}", path.display())))?;
    listener.set_nonblocking(true).map_err(|e| ServeError::Listen(e.to_string()))?;
    Ok(listener)
}

fn bind(options: &ServeOptions) -> Result<Listener, ServeError> {
    match &options.listen {
        Listen::Unix(path) => Ok(Listener::Unix(bind_unix(path, "listen")?, path.clone())),
        Listen::Tcp(addr) => {
            if !addr.ip().is_loopback() && !options.allow_remote {
                return Err(ServeError::Listen(format!(
                    "listen: {addr} is not a loopback address; the device has no authentication, so pass --allow-remote to serve it to other machines"
                )));
            }
            let l = TcpListener::bind(addr).map_err(|e| ServeError::Listen(format!("listen {addr}: {e}")))?;
            l.set_nonblocking(true).map_err(|e| ServeError::Listen(e.to_string()))?;
            Ok(Listener::Tcp(l))
        }
    }
}

fn bind_control(path: &Path) -> Result<Listener, ServeError> {
    Ok(Listener::Unix(bind_unix(path, "control")?, path.to_path_buf()))
}

/// A connection's stream, whichever kind.
pub(crate) trait Stream: Read + Write + Send + 'static {
    fn duplicate(&self) -> io::Result<Box<dyn Stream>>;
    fn close(&self);
    /// Blocking with these limits (handshake, control), or non-blocking (the device loop).
    fn set_limits(&self, limit: Option<Duration>) -> io::Result<()>;
    fn set_nonblocking_mode(&self) -> io::Result<()>;
    fn fd(&self) -> RawFd;
}

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
            fn set_limits(&self, limit: Option<Duration>) -> io::Result<()> {
                self.set_read_timeout(limit)?;
                self.set_write_timeout(limit)
            }
            fn set_nonblocking_mode(&self) -> io::Result<()> {
                self.set_limits(None)?;
                self.set_nonblocking(true)
            }
            fn fd(&self) -> RawFd {
                self.as_raw_fd()
            }
        }
    )*};
}

impl_stream!(UnixStream, TcpStream);

/// A client gets this long for its handshake, and a control client for its command.
const HANDSHAKE_TIME: Duration = Duration::from_secs(10);

/// Accepts connections and control clients; each handshake runs on a thread of its own, so a
/// slow or hostile client delays nobody.
struct Acceptor {
    export: Export,
    slots: Arc<Mutex<Vec<bool>>>,
    messages: Sender<Message>,
    waker: Arc<mio::Waker>,
}

impl Acceptor {
    fn run(self, listener: Listener, control: Option<Listener>, stop: &AtomicBool) {
        let mut open: Vec<(Box<dyn Stream>, thread::JoinHandle<()>)> = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            let mut idle = true;
            if let Ok(stream) = listener.accept() {
                idle = false;
                if let Some(started) = self.open_connection(stream) {
                    open.push(started);
                }
            }
            if let Some(Ok(stream)) = control.as_ref().map(Listener::accept) {
                idle = false;
                if let Ok(closer) = stream.duplicate() {
                    let (messages, waker) = (self.messages.clone(), self.waker.clone());
                    open.push((closer, thread::spawn(move || control_client(stream, &messages, &waker))));
                }
            }
            open.retain(|(_, h)| !h.is_finished());
            if idle {
                thread::sleep(Duration::from_millis(20));
            }
        }
        for (stream, handle) in open {
            stream.close();
            let _ = handle.join();
        }
    }

    /// Takes a free queue for `stream` and starts its handshake; `None` at the connection limit.
    fn open_connection(&self, stream: Box<dyn Stream>) -> Option<(Box<dyn Stream>, thread::JoinHandle<()>)> {
        let queue = {
            let mut slots = self.slots.lock().expect("slots lock");
            let free = slots.iter().position(|used| !used);
            if let Some(i) = free {
                slots[i] = true;
            }
            free
        };
        let Some(queue) = queue else {
            stream.close(); // at the connection limit
            return None;
        };
        let closer = stream.duplicate().ok();
        let (export, slots, messages, waker) =
            (self.export, self.slots.clone(), self.messages.clone(), self.waker.clone());
        let handle = thread::spawn(move || {
            if let Some(stream) = handshake(stream, export) {
                if messages.send(Message::Opened { queue, stream }).is_ok() && waker.wake().is_ok() {
                    return; // the device loop frees the queue when the connection ends
                }
            }
            slots.lock().expect("slots lock")[queue] = false;
        });
        match closer {
            Some(closer) => Some((closer, handle)),
            None => None,
        }
    }
}

/// The handshake, then the stream made non-blocking for the device loop; `None` if it failed
/// (that connection only: shut down, so that no copy of the socket keeps it open).
fn handshake(mut stream: Box<dyn Stream>, export: Export) -> Option<Box<dyn Stream>> {
    let ok = stream.set_limits(Some(HANDSHAKE_TIME)).is_ok()
        && matches!(protocol::handshake(&mut stream, export), Ok(Handshake::Transmission))
        && stream.set_nonblocking_mode().is_ok();
    if ok {
        Some(stream)
    } else {
        stream.close();
        None
    }
}

/// One control client: a command line (`results` or `stop`), one JSON document back.
fn control_client(mut stream: Box<dyn Stream>, messages: &Sender<Message>, waker: &mio::Waker) {
    if stream.set_limits(Some(HANDSHAKE_TIME)).is_err() {
        return;
    }
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while line.len() < 64 && !line.ends_with(b"\n") {
        match stream.read(&mut byte) {
            Ok(1) => line.push(byte[0]),
            _ => break,
        }
    }
    let text = String::from_utf8_lossy(&line).trim().to_string();
    let command = match text.as_str() {
        "results" => ControlCommand::Results,
        "stop" => ControlCommand::Stop,
        other => {
            let error = format!("unknown control command {other:?}; expected results or stop");
            let _ = stream.write_all(format!("{}\n", serde_json::json!({ "error": error })).as_bytes());
            stream.close();
            return;
        }
    };
    let (answer, answered) = mpsc::channel();
    if messages.send(Message::Control { command, answer }).is_ok() && waker.wake().is_ok() {
        if let Ok(document) = answered.recv_timeout(Duration::from_secs(60)) {
            let _ = stream.write_all(format!("{document}\n").as_bytes()); // one write: one message
        }
    }
    stream.close();
}

/// The protocol's error for a request the device must not see, or 0.
pub(crate) fn check(request: &Request, size_bytes: u64, read_only: bool) -> u32 {
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

/// p50, p90, p99 and max of `values` (empty: nulls).
pub(crate) fn percentiles(values: &[f64]) -> serde_json::Value {
    if values.is_empty() {
        return serde_json::json!({"count": 0, "p50": null, "p90": null, "p99": null, "max": null});
    }
    let mut values = values.to_vec();
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    serde_json::json!({"count": values.len(), "p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "max": at(1.0)})
}
