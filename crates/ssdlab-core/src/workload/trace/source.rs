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

impl Source {
    /// Opens `path`; returns the source and its length in bytes. A stream is copied to a spool
    /// (or a live spool of it reused). Errors are plain sentences naming the file.
    pub(super) fn open(path: &Path) -> Result<(Source, u64), String> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot open trace file \"{shown}\": {}", plain(&e)))?;
        if meta.is_dir() {
            return Err(format!("trace file \"{shown}\" is a directory; expected a trace file"));
        }
        if meta.is_file() {
            let file = File::open(path).map_err(|e| format!("cannot open trace file \"{shown}\": {}", plain(&e)))?;
            return Ok((Source::File(file), meta.len()));
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

/// Copies the stream at `path` to a new anonymous temporary file.
fn spool_stream(path: &Path) -> Result<Spool, String> {
    let shown = path.display();
    let mut stream = File::open(path).map_err(|e| format!("cannot open trace file \"{shown}\": {}", plain(&e)))?;
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
    let len = io::copy(&mut stream, &mut file).map_err(|e| {
        let what = if e.kind() == io::ErrorKind::StorageFull { "copy" } else { "read" };
        spool_error(e, what)
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
