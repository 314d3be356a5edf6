//! The device loop: one thread that owns the model and every connection's socket. It waits for
//! readiness (epoll, through mio) or the next simulated event, reads and parses what arrived,
//! submits it, advances the model and writes the replies, all without blocking.
//!
//! One thread instead of a reader per connection handing requests over a channel: each hand-off
//! woke a sleeping thread, and on these virtual machines a wake-up costs tens of microseconds,
//! more than the model's work for a request.

use std::collections::HashMap;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use ssdlab_core::device::{Completion, HostRequest, Op, Status};
use ssdlab_core::Device;

use super::connection::{Connection, Parsed};
use super::{percentiles, Control, ControlCommand, Host, Message, Pace, ServeError, ServeOptions, ServeReport, Stream};
use crate::protocol::{self, Command, Export};

/// The waker's token; a connection's token is its queue.
const WAKER: Token = Token(usize::MAX);
/// How often the host is polled (stop, snapshot), and the longest sleep.
const POLL: Duration = Duration::from_millis(50);
/// How long before a due completion the real-time loop stops sleeping and spins: a sleeping
/// thread wakes tens of microseconds late (the kernel's timer slack).
const SPIN: Duration = Duration::from_micros(200);
/// A client that has not taken its replies for this long loses its connection.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Events the model processes under `Pace::None` before the loop looks at the sockets again.
const EVENT_BATCH: usize = 256;

/// A request in the device: whose it is, and whether a flush must follow it (FUA).
struct Pending {
    queue: usize,
    generation: u64,
    cookie: u64,
    then_flush: bool,
}

pub(super) struct DeviceLoop<'d> {
    device: &'d mut Device,
    pace: Pace,
    export: Export,
    max_in_flight: usize,
    started: Instant,
    poll: Poll,
    waker: Arc<Waker>,
    /// By queue: the connection served as that host queue, if one is open.
    connections: Vec<Option<Connection>>,
    /// Queues in use, shared with the acceptor (which takes them; this loop frees them).
    slots: Arc<Mutex<Vec<bool>>>,
    generations: u64,
    pending: HashMap<u64, Pending>,
    next_id: u64,
    /// Requests taken off the wire in one pass (kept to reuse its memory).
    parsed: Vec<Parsed>,
    /// Completions taken from the model in one pass (kept to reuse its memory).
    done: Vec<Completion>,
    requests: u64,
    refused: u64,
    pacing_errors_us: Vec<f64>,
}

impl<'d> DeviceLoop<'d> {
    pub(super) fn new(
        device: &'d mut Device,
        options: &ServeOptions,
        export: Export,
        slots: Arc<Mutex<Vec<bool>>>,
    ) -> Result<Self, ServeError> {
        let poll = Poll::new().map_err(|e| ServeError::Listen(format!("epoll: {e}")))?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(|e| ServeError::Listen(e.to_string()))?);
        let queues = slots.lock().expect("slots lock").len();
        Ok(Self {
            device,
            pace: options.pace,
            export,
            max_in_flight: options.max_in_flight.max(1),
            started: Instant::now(),
            poll,
            waker,
            connections: (0..queues).map(|_| None).collect(),
            slots,
            generations: 0,
            pending: HashMap::new(),
            next_id: 0,
            parsed: Vec::new(),
            done: Vec::new(),
            requests: 0,
            refused: 0,
            pacing_errors_us: Vec::new(),
        })
    }

    pub(super) fn waker(&self) -> Result<Arc<Waker>, ServeError> {
        Ok(self.waker.clone())
    }

    /// Picoseconds of wall clock since the server started: the model's time under real-time pacing.
    fn wall_ps(&self) -> u64 {
        self.started.elapsed().as_nanos().min(u64::MAX as u128 / 1000) as u64 * 1000
    }

    fn at_ps(&self, instant: Instant) -> u64 {
        instant.saturating_duration_since(self.started).as_nanos().min(u64::MAX as u128 / 1000) as u64 * 1000
    }

    pub(super) fn run(mut self, inbox: &Receiver<Message>, host: &mut dyn Host) -> Result<ServeReport, ServeError> {
        let mut events = Events::with_capacity(64);
        let mut last_poll = Instant::now();
        'serving: loop {
            if last_poll.elapsed() >= POLL {
                last_poll = Instant::now();
                match host.poll() {
                    Control::Continue => {}
                    Control::Stop => break,
                    Control::Snapshot => host.snapshot(&self.report()),
                }
            }
            let timeout = self.timeout();
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(ServeError::Device(format!("epoll: {e}")));
                }
            }
            let arrived = Instant::now();
            for event in events.iter() {
                if event.token() == WAKER {
                    continue;
                }
                if let Some(Some(c)) = self.connections.get_mut(event.token().0) {
                    c.readable |= event.is_readable() || event.is_read_closed() || event.is_error();
                }
            }
            // New connections and control commands (cheap when there are none).
            while let Ok(message) = inbox.try_recv() {
                match message {
                    Message::Opened { queue, stream } => self.open(queue, stream),
                    Message::Control { command, answer } => {
                        let report = self.report();
                        let document = match command {
                            ControlCommand::Results => {
                                host.snapshot(&report);
                                document(&report)
                            }
                            ControlCommand::Stop => serde_json::json!({ "stopping": true }).to_string(),
                        };
                        let _ = answer.send(document);
                        if command == ControlCommand::Stop {
                            break 'serving;
                        }
                    }
                }
            }
            self.take_requests(arrived)?;
            self.advance()?;
            self.flush_replies();
        }
        // Stopping: what is in flight completes (at once, whatever the pace), then the replies go.
        while let Some(t) = self.device.next_event_time() {
            self.device.advance_to(t)?;
            self.deliver();
        }
        self.flush_replies();
        for queue in 0..self.connections.len() {
            self.close(queue);
        }
        Ok(self.report())
    }

    /// How long the loop may wait for a socket: not past the next due completion (less the
    /// spin), not at all while the model or a connection has work.
    fn timeout(&self) -> Duration {
        if self.connections.iter().flatten().any(|c| c.wants_service(self.max_in_flight)) {
            return Duration::ZERO;
        }
        match (self.pace, self.device.next_event_time()) {
            (_, None) => POLL,
            (Pace::None, Some(_)) => Duration::ZERO,
            (Pace::RealTime, Some(t)) => {
                let wait = Duration::from_nanos(t.saturating_sub(self.wall_ps()) / 1000);
                wait.saturating_sub(SPIN).min(POLL)
            }
        }
    }

    fn open(&mut self, queue: usize, stream: Box<dyn Stream>) {
        let fd = stream.fd();
        let registered =
            self.poll.registry().register(&mut SourceFd(&fd), Token(queue), Interest::READABLE | Interest::WRITABLE);
        if registered.is_err() {
            stream.close();
            self.slots.lock().expect("slots lock")[queue] = false;
            return;
        }
        self.generations += 1;
        self.connections[queue] = Some(Connection::new(stream, self.generations));
    }

    /// Ends the connection on `queue` (its requests still in the model complete unanswered).
    fn close(&mut self, queue: usize) {
        if let Some(c) = self.connections.get_mut(queue).and_then(Option::take) {
            let fd = c.stream.fd();
            let _ = self.poll.registry().deregister(&mut SourceFd(&fd));
            c.stream.close();
            self.slots.lock().expect("slots lock")[queue] = false;
        }
    }

    /// Reads, parses and submits what every connection has room for.
    fn take_requests(&mut self, arrived: Instant) -> Result<(), ServeError> {
        let (size_bytes, read_only) = (self.export.size_bytes, self.export.flags & protocol::FLAG_READ_ONLY != 0);
        for queue in 0..self.connections.len() {
            let Some(c) = self.connections[queue].as_mut() else { continue };
            let mut parsed = std::mem::take(&mut self.parsed);
            let outcome = c.take_requests(&mut parsed, self.max_in_flight, size_bytes, read_only);
            let generation = c.generation;
            for p in parsed.drain(..) {
                self.take(queue, generation, p, arrived)?;
            }
            self.parsed = parsed;
            if outcome.is_err() {
                self.close(queue); // closed by the client, or broken: this connection only
            }
        }
        Ok(())
    }

    fn take(&mut self, queue: usize, generation: u64, p: Parsed, arrived: Instant) -> Result<(), ServeError> {
        let request = p.request;
        if p.error != 0 {
            self.reply(queue, generation, request.cookie, p.error, &[]);
            return Ok(());
        }
        if self.pace == Pace::RealTime {
            // At its arrival, or now if the model has already passed that moment.
            self.device.advance_to(self.at_ps(arrived))?;
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
        let fua = request.flags & protocol::CMD_FLAG_FUA != 0 && op != Op::Read && op != Op::Flush;
        let pending = Pending { queue, generation, cookie: request.cookie, then_flush: fua };
        self.submit(pending, op, start_sector, sectors, p.data.as_deref());
        Ok(())
    }

    fn submit(&mut self, pending: Pending, op: Op, start_sector: u64, sectors: u32, data: Option<&[u8]>) {
        self.next_id += 1;
        let id = self.next_id;
        let request =
            HostRequest { id, queue: pending.queue as u16, op, start_sector, sectors, data, placement_handle: None };
        match self.device.submit(&request) {
            Ok(()) => {
                self.requests += 1;
                self.pending.insert(id, pending);
            }
            Err(_) => {
                // Checked before, so this is a device limit (e.g. a trim the mapping cannot do).
                self.refused += 1;
                self.reply(pending.queue, pending.generation, pending.cookie, protocol::EINVAL, &[]);
            }
        }
    }

    fn advance(&mut self) -> Result<(), ServeError> {
        match self.pace {
            Pace::None => {
                for _ in 0..EVENT_BATCH {
                    let Some(t) = self.device.next_event_time() else { break };
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
        let wall_ps = if self.pace == Pace::RealTime { self.wall_ps() } else { 0 };
        let mut done = std::mem::take(&mut self.done);
        done.extend(self.device.completions());
        for c in done.drain(..) {
            let Some(p) = self.pending.remove(&c.id) else { continue };
            if p.then_flush && c.status == Status::Success {
                let flush = Pending { then_flush: false, ..p };
                self.submit(flush, Op::Flush, 0, 0, None);
                continue;
            }
            if self.pace == Pace::RealTime {
                self.pacing_errors_us.push((wall_ps as f64 - c.completed_ps as f64) / 1e6);
            }
            let mut error = match c.status {
                Status::Success => 0,
                Status::Unsupported => protocol::ENOTSUP,
                // NBD carries no zone commands; a zoned device refuses misplaced writes.
                _ => protocol::EIO,
            };
            if error == 0 && c.op == Op::Flush && self.device.has_backing_file() && self.device.persist().is_err() {
                error = protocol::EIO; // durable before the reply, or an error
            }
            self.reply(p.queue, p.generation, p.cookie, error, c.data.as_deref().unwrap_or_default());
        }
        self.done = done;
    }

    fn reply(&mut self, queue: usize, generation: u64, cookie: u64, error: u32, data: &[u8]) {
        if let Some(Some(c)) = self.connections.get_mut(queue) {
            if c.generation == generation {
                c.reply(cookie, error, data);
            }
        }
    }

    /// Writes what every connection has queued; a failed socket, or a client that has not taken
    /// its replies for [`WRITE_TIMEOUT`], ends that connection.
    fn flush_replies(&mut self) {
        let now = Instant::now();
        for queue in 0..self.connections.len() {
            let Some(c) = self.connections[queue].as_mut() else { continue };
            if !c.has_output() {
                continue;
            }
            let failed = c.flush(now).is_err();
            if failed || c.stalled_since.is_some_and(|t| now.duration_since(t) > WRITE_TIMEOUT) {
                self.close(queue);
            }
        }
    }

    fn report(&mut self) -> ServeReport {
        let results = self.device.results();
        let live = serde_json::json!({
            "pace": match self.pace { Pace::RealTime => "real-time", Pace::None => "none" },
            "connections": self.connections.len(),
            "requests": self.requests,
            "refused": self.refused,
            "pacing_error_us": percentiles(&self.pacing_errors_us),
        });
        ServeReport { results, live }
    }
}

/// The results document with its `live` section, as the control socket answers it.
fn document(report: &ServeReport) -> String {
    let mut value = serde_json::to_value(&report.results).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.insert("live".to_string(), report.live.clone());
    }
    value.to_string()
}
