//! The interposer's log: one text record per `write(2)`.
//!
//! Records (numbers: `seq` and sizes in decimal, addresses in hex without `0x`):
//!
//! ```text
//! H 1 PID SENTINEL_BASE            once, first: protocol version 1
//! M SEQ NBYTES                     followed by NBYTES of /proc/self/maps
//! A SEQ ADDR SIZE [FRAME…]         malloc, calloc, memalign, aligned_alloc, posix_memalign, valloc, pvalloc
//! R SEQ OLD NEW SIZE [FRAME…]      realloc/reallocarray: frees OLD (unless 0), allocates NEW (unless 0)
//! F SEQ ADDR                       free
//! ```
//!
//! `FRAME`s are return addresses, innermost first, the interposer's own frames removed. Every
//! record of event `SEQ` is written before the event's close touch, so a reader that sees the
//! close touch in the trace finds the record in the log.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

/// Environment variable naming the log (a file or a FIFO).
pub const ENV: &str = "CACHESCOPE_EVENTS_LOG";

/// Return addresses kept per call path.
pub const MAX_FRAMES: usize = 12;

/// Protocol version in the `H` record.
pub const VERSION: u32 = 1;

static FD: AtomicI32 = AtomicI32::new(-1);

/// Serialises writes: a map record can exceed the pipe's atomic write size (`PIPE_BUF`).
static LOCK: Mutex<()> = Mutex::new(());

/// Opens `$CACHESCOPE_EVENTS_LOG` for writing and removes the variable from the environment.
///
/// # Safety
/// Must run before the program starts threads (it edits the environment).
pub unsafe fn open_from_env() -> bool {
    let Some(path) = std::env::var_os(ENV) else {
        return false;
    };
    unsafe { std::env::remove_var(ENV) };
    let Ok(cpath) =
        std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
    else {
        return false;
    };
    // SAFETY: plain syscalls on a NUL-terminated path and the descriptor they return.
    let fd = unsafe {
        libc::open(
            cpath.as_ptr(),
            libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        say(&format!(
            "cachescope-preload: cannot open {}: {}; recording without allocation events\n",
            path.to_string_lossy(),
            std::io::Error::last_os_error()
        ));
        return false;
    }
    // Move the descriptor out of the way of programs that reuse low descriptor numbers.
    let high = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 600) };
    let fd = if high >= 0 {
        unsafe { libc::close(fd) };
        high
    } else {
        fd
    };
    FD.store(fd, Ordering::Release);
    true
}

/// Writes `bytes` to the log as one record.
pub fn write_record(bytes: &[u8]) {
    let fd = FD.load(Ordering::Acquire);
    if fd < 0 {
        return;
    }
    let _held = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    write_fd(fd, bytes);
}

/// Writes a message on stderr (no allocation-free guarantee needed: rare).
pub fn say(msg: &str) {
    write_fd(2, msg.as_bytes());
}

fn write_fd(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

/// A record being built in a fixed buffer (no allocation on the hot path).
pub struct Record {
    buf: [u8; 512],
    len: usize,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            buf: [0; 512],
            len: 0,
        }
    }
}

impl std::fmt::Write for Record {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl Record {
    /// Appends ` FRAME…` and the newline, then writes the record.
    pub fn finish_with_frames(mut self, frames: &[u64]) {
        for f in frames {
            let _ = write!(self, " {f:x}");
        }
        let _ = self.write_str("\n");
        write_record(&self.buf[..self.len]);
    }
}
