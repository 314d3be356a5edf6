//! Where a trace's bytes come from. A regular file is read in place. Anything else that can be
//! read (a pipe such as `/dev/stdin` or bash's `<(zcat trace.gz)`, a named FIFO made with
//! `mkfifo`, a character device) cannot be rewound, yet a trace is read more than once: format
//! sniffing and the check for records rewind it, and preconditioning scans a flow's trace with a
//! reader of its own before the run reads it again. Such a stream is therefore copied once, as it
//! is opened, to an anonymous temporary file (a "spool"), and every reader of the same stream in
//! this process reads that copy for as long as one of them is alive. A second `open` of a FIFO
//! would otherwise wait for a writer that has already gone.
//!
//! The spool lives in `std::env::temp_dir()` (`TMPDIR`); on Unix its name is removed at once, so
//! the disk space returns when the last reader is dropped, even if the process is killed.
//!
//! A compressed trace (gzip, bzip2, xz or zstd, told by its first bytes, not its name: SNIA
//! ships the MSR Cambridge traces gzipped) is decompressed once into a spool the same way,
//! whether it comes from a file or a pipe; the rest of the trace reader sees plain text.
//! `-` as a trace path is the standard input (see [`resolve`]).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// The bytes of a trace, readable from any position.
pub(super) enum Source {
    /// A regular file, read in place.
    File(File),
    /// A stream copied to a temporary file; `pos` is this reader's position in it (readers of one
    /// spool share the file but not a position: they read with positioned reads).
    Spool { spool: Arc<Spool>, pos: u64 },
}

/// A stream's copy. Its temporary file goes when the last reader lets go of it.
pub(super) struct Spool {
    file: File,
    len: u64,
    /// Where the copy lies, when it could not be unlinked while open (not on Unix).
    path: Option<PathBuf>,
}

impl Drop for Spool {
    fn drop(&mut self) {
        if let Some(path) = &self.path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Identifies a stream, so that a second reader of it finds the first one's spool: the device
/// and inode on Unix (`/dev/stdin` and `/proc/self/fd/0` name the same pipe), the path elsewhere.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
enum StreamId {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg_attr(unix, allow(dead_code))]
    Path(PathBuf),
}

fn stream_id(path: &Path, meta: &std::fs::Metadata) -> StreamId {
    #[cfg(unix)]
    {
        let _ = path;
        use std::os::unix::fs::MetadataExt;
        StreamId::Inode(meta.dev(), meta.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        StreamId::Path(path.to_path_buf())
    }
}

/// The spools alive in this process, by stream.
static SPOOLS: Mutex<Option<HashMap<StreamId, Weak<Spool>>>> = Mutex::new(None);

/// An I/O error in plain words (the operating system's text and code only where no plainer
/// wording exists).
pub(super) fn plain(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".into(),
        io::ErrorKind::PermissionDenied => "permission denied (the file cannot be read by this user)".into(),
        io::ErrorKind::IsADirectory => "it is a directory, not a trace file".into(),
        io::ErrorKind::StorageFull => "the disk is full".into(),
        io::ErrorKind::InvalidData => "it is not a readable text file".into(),
        _ => e.to_string(),
    }
}

/// Where a flow's trace is: `given` resolved from the config's folder, or the standard input
/// for `-` (as fio and most Unix tools read it).
pub fn resolve(base_dir: &Path, given: &Path) -> PathBuf {
    if given == Path::new("-") {
        PathBuf::from("/dev/stdin")
    } else {
        base_dir.join(given)
    }
}

/// A compression format, told by the magic number its data starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Compression {
    Gzip,
    Bzip2,
    Xz,
    Zstd,
}

impl Compression {
    fn sniff(head: &[u8]) -> Option<Self> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Self::Gzip)
        } else if head.starts_with(b"BZh") {
            Some(Self::Bzip2)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Self::Xz)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Self::Zstd)
        } else {
            None
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Bzip2 => "bzip2",
            Self::Xz => "xz",
            Self::Zstd => "zstd",
        }
    }

    /// Decompresses all of `input` into `output`; returns the bytes written.
    fn decompress(self, input: impl io::BufRead, output: &mut File) -> io::Result<u64> {
        match self {
            Self::Gzip => io::copy(&mut flate2::bufread::MultiGzDecoder::new(input), output),
            Self::Bzip2 => io::copy(&mut bzip2::bufread::MultiBzDecoder::new(input), output),
            Self::Zstd => {
                let mut decoder = ruzstd::decoding::StreamingDecoder::new(input)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
                io::copy(&mut decoder, output)
            }
            Self::Xz => {
                let mut input = input;
                let mut counted = CountingWriter { inner: output, bytes: 0 };
                lzma_rs::xz_decompress(&mut input, &mut counted).map_err(|e| match e {
                    lzma_rs::error::Error::IoError(e) => e,
                    other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
                })?;
                Ok(counted.bytes)
            }
        }
    }
}

/// Counts what passes through (lzma-rs writes to a `Write` and says nothing of the length).
struct CountingWriter<'a> {
    inner: &'a mut File,
    bytes: u64,
}

impl io::Write for CountingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl Source {
    /// Opens `path`; returns the source and its length in bytes (decompressed). A stream or a
    /// compressed file is copied to a spool (or a live spool of it reused). Errors are plain
    /// sentences naming the file.
    pub(super) fn open(path: &Path) -> Result<(Source, u64), String> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot open trace file \"{shown}\": {}", plain(&e)))?;
        if meta.is_dir() {
            return Err(format!("trace file \"{shown}\" is a directory; expected a trace file"));
        }
        if meta.is_file() {
            let mut file =
                File::open(path).map_err(|e| format!("cannot open trace file \"{shown}\": {}", plain(&e)))?;
            let mut head = [0u8; 6];
            let n = read_at(&file, &mut head, 0)
                .map_err(|e| format!("cannot read trace file \"{shown}\": {}", plain(&e)))?;
            if Compression::sniff(&head[..n]).is_none() {
                file.seek(SeekFrom::Start(0))
                    .map_err(|e| format!("cannot read trace file \"{shown}\": {}", plain(&e)))?;
                return Ok((Source::File(file), meta.len()));
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if meta.file_type().is_block_device() {
                return Err(format!(
                    "trace file \"{shown}\" is a block device; a trace is a text file (or a pipe or FIFO that carries one)"
                ));
            }
        }
        let id = stream_id(path, &meta);
        let mut spools = SPOOLS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let spools = spools.get_or_insert_with(HashMap::new);
        spools.retain(|_, spool| spool.strong_count() > 0);
        if let Some(spool) = spools.get(&id).and_then(Weak::upgrade) {
            let len = spool.len;
            return Ok((Source::Spool { spool, pos: 0 }, len));
        }
        let spool = Arc::new(spool_stream(path)?);
        spools.insert(id, Arc::downgrade(&spool));
        let len = spool.len;
        Ok((Source::Spool { spool, pos: 0 }, len))
    }
}

/// Copies the stream (or compressed file) at `path`, decompressed, to a new anonymous
/// temporary file.
fn spool_stream(path: &Path) -> Result<Spool, String> {
    let shown = path.display();
    let stream = File::open(path).map_err(|e| format!("cannot open trace file \"{shown}\": {}", plain(&e)))?;
    let mut stream = io::BufReader::with_capacity(1 << 16, stream);
    let compression = match io::BufRead::fill_buf(&mut stream) {
        Ok(head) => Compression::sniff(head),
        Err(e) => return Err(format!("cannot read trace file \"{shown}\": {}", plain(&e))),
    };
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let dir = std::env::temp_dir();
    let (mut file, temp_path) = loop {
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let candidate = dir.join(format!("ssdlab-trace-spool-{}-{n}", std::process::id()));
        match OpenOptions::new().read(true).write(true).create_new(true).open(&candidate) {
            Ok(file) => break (file, candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(format!(
                    "trace file \"{shown}\" is a stream (a pipe or FIFO) and is copied to a temporary file to be read, but {} cannot be written: {}",
                    dir.display(),
                    plain(&e)
                ))
            }
        }
    };
    // On Unix the open file outlives its name: nothing is left behind whatever happens next.
    let path_kept = if cfg!(unix) && std::fs::remove_file(&temp_path).is_ok() { None } else { Some(temp_path) };
    let spool_error = |e: io::Error, what: &str| {
        format!(
            "cannot {what} trace stream \"{shown}\" (copying it to a temporary file in {}): {}",
            dir.display(),
            plain(&e)
        )
    };
    let copied = match compression {
        None => io::copy(&mut stream, &mut file),
        Some(c) => c.decompress(stream, &mut file),
    };
    let len = copied.map_err(|e| match (compression, e.kind()) {
        (_, io::ErrorKind::StorageFull) => spool_error(e, "copy"),
        (Some(c), _) => format!("trace file \"{shown}\" is {}-compressed but cannot be decompressed: {e}", c.name()),
        (None, _) => spool_error(e, "read"),
    })?;
    Ok(Spool { file, len, path: path_kept })
}

/// Reads at `pos` without moving any shared file position.
fn read_at(file: &File, buf: &mut [u8], pos: u64) -> io::Result<usize> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_at(file, buf, pos)
    }
    #[cfg(windows)]
    {
        std::os::windows::fs::FileExt::seek_read(file, buf, pos)
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(file) => file.read(buf),
            Source::Spool { spool, pos } => {
                let n = read_at(&spool.file, buf, *pos)?;
                *pos += n as u64;
                Ok(n)
            }
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        match self {
            Source::File(file) => file.seek(to),
            Source::Spool { spool, pos } => {
                let target = match to {
                    SeekFrom::Start(n) => Some(n),
                    SeekFrom::Current(d) => pos.checked_add_signed(d),
                    SeekFrom::End(d) => spool.len.checked_add_signed(d),
                };
                *pos = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
                Ok(*pos)
            }
        }
    }
}
