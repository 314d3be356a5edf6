//! MQSim's ASCII trace format, one request per line:
//! `arrival_time_ns device_number start_sector size_in_sectors type` (type 1 = read, 0 = write,
//! 512 B sectors). Times are replayed relative to the first record, scaled by `time_scale`.
//! Addresses beyond the device wrap modulo its capacity (as MQSim does); the number of wrapped
//! requests is reported as a warning.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::{RequestSpec, TraceError};
use crate::time::{SimTime, PS_PER_NS};

pub struct TraceReader {
    path: PathBuf,
    reader: BufReader<File>,
    line: String,
    line_number: u64,
    time_scale: f64,
    first_ns: Option<u64>,
    last_arrival: SimTime,
    logical_sectors: u64,
    pub file_bytes: u64,
    pub bytes_read: u64,
    pub wrapped: u64,
    pub reordered: u64,
}

impl TraceReader {
    pub fn open(path: &Path, time_scale: f64, logical_sectors: u64) -> std::io::Result<Self> {
        let file = File::open(path)?;
        let file_bytes = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(1 << 16, file),
            line: String::new(),
            line_number: 0,
            time_scale,
            first_ns: None,
            last_arrival: 0,
            logical_sectors,
            file_bytes,
            bytes_read: 0,
            wrapped: 0,
            reordered: 0,
        })
    }

    fn error(&self, reason: String) -> TraceError {
        TraceError { file: self.path.display().to_string(), line: self.line_number, reason }
    }

    /// The next request, `None` at the end of the file. Blank lines and `#` comments are skipped.
    pub fn next_request(&mut self) -> Result<Option<RequestSpec>, TraceError> {
        loop {
            self.line.clear();
            let n = self.reader.read_line(&mut self.line).map_err(|e| self.error(format!("cannot read: {e}")))?;
            if n == 0 {
                return Ok(None);
            }
            self.bytes_read += n as u64;
            self.line_number += 1;
            let text = self.line.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            return self.parse().map(Some);
        }
    }

    fn parse(&mut self) -> Result<RequestSpec, TraceError> {
        const LAYOUT: &str =
            "expected 5 columns: arrival_time_ns device_number start_sector size_in_sectors type(0 = write, 1 = read)";
        let mut fields = [0u64; 5];
        let mut count = 0;
        for (i, token) in self.line.split_whitespace().enumerate() {
            if i >= 5 {
                count = 6;
                break;
            }
            fields[i] = token.parse().map_err(|_| {
                self.error(format!("column {} is \"{token}\", not a non-negative integer; {LAYOUT}", i + 1))
            })?;
            count = i + 1;
        }
        if count != 5 {
            let found = self.line.split_whitespace().count();
            return Err(self.error(format!("found {found} columns; {LAYOUT}")));
        }
        let [time_ns, _device, start_sector, sectors, kind] = fields;
        if sectors == 0 || sectors > u32::MAX as u64 {
            return Err(self.error(format!("size_in_sectors must be between 1 and {}, got {sectors}", u32::MAX)));
        }
        let is_read = match kind {
            1 => true,
            0 => false,
            other => return Err(self.error(format!("type must be 0 (write) or 1 (read), got {other}"))),
        };
        let first = *self.first_ns.get_or_insert(time_ns);
        let relative_ns = time_ns.saturating_sub(first) as f64 * self.time_scale;
        let mut arrival = (relative_ns * PS_PER_NS as f64).round() as SimTime;
        if arrival < self.last_arrival {
            self.reordered += 1;
            arrival = self.last_arrival;
        }
        self.last_arrival = arrival;
        let sectors = sectors.min(self.logical_sectors);
        let mut start = start_sector;
        if start + sectors > self.logical_sectors {
            self.wrapped += 1;
            start %= self.logical_sectors;
            if start + sectors > self.logical_sectors {
                start = self.logical_sectors - sectors;
            }
        }
        Ok(RequestSpec { arrival, is_read, start_sector: start, sectors: sectors as u32 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn trace(text: &str) -> (tempfile_path::TempPath, TraceReader) {
        let path = tempfile_path::TempPath::new(text);
        let reader = TraceReader::open(path.path(), 1.0, 1 << 20).unwrap();
        (path, reader)
    }

    mod tempfile_path {
        use super::*;
        pub struct TempPath(PathBuf);
        impl TempPath {
            pub fn new(text: &str) -> Self {
                static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let path = std::env::temp_dir().join(format!("ssdlab-trace-{}-{n}.trace", std::process::id()));
                std::fs::File::create(&path).unwrap().write_all(text.as_bytes()).unwrap();
                Self(path)
            }
            pub fn path(&self) -> &Path {
                &self.0
            }
        }
        impl Drop for TempPath {
            fn drop(&mut self) {
                let _ = std::fs::remove_file(&self.0);
            }
        }
    }

    #[test]
    fn reads_records_relative_to_the_first() {
        let (_p, mut r) = trace("1000 0 16 8 1\n\n# note\n3000 1 32 16 0\n");
        let a = r.next_request().unwrap().unwrap();
        assert_eq!(a, RequestSpec { arrival: 0, is_read: true, start_sector: 16, sectors: 8 });
        let b = r.next_request().unwrap().unwrap();
        assert_eq!(b, RequestSpec { arrival: 2000 * PS_PER_NS, is_read: false, start_sector: 32, sectors: 16 });
        assert!(r.next_request().unwrap().is_none());
    }

    #[test]
    fn four_columns_is_an_error_naming_the_line() {
        let (_p, mut r) = trace("1000 0 16 8 1\n2000 0 16 8\n");
        r.next_request().unwrap();
        let e = r.next_request().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("found 4 columns"), "{}", e.reason);
    }

    #[test]
    fn bad_type_and_size_are_errors() {
        let (_p, mut r) = trace("1000 0 16 8 2\n");
        assert!(r.next_request().unwrap_err().reason.contains("type must be 0"));
        let (_p, mut r) = trace("1000 0 16 0 1\n");
        assert!(r.next_request().unwrap_err().reason.contains("size_in_sectors"));
        let (_p, mut r) = trace("10x0 0 16 8 1\n");
        assert!(r.next_request().unwrap_err().reason.contains("column 1"));
    }

    #[test]
    fn addresses_beyond_the_device_wrap() {
        let (_p, mut r) = trace(&format!("0 0 {} 8 1\n", (1u64 << 20) + 40));
        let a = r.next_request().unwrap().unwrap();
        assert_eq!(a.start_sector, 40);
        assert_eq!(r.wrapped, 1);
    }
}
