//! The shared-memory ring through which cachescope's Valgrind tool hands its record buffers
//! to cachescope (`--cs-ring`; the tool's side is `crates/cachescope-valgrind/tool/cs_ring.c`,
//! the layout is in `docs/recording.md`).
//!
//! A pipe copies every byte twice in the kernel and allocates a page for every 4 KiB written:
//! on `gzip -9`'s 603 MB of records that took more CPU than Valgrind running the program. Here
//! cachescope creates an anonymous shared file (`memfd_create`) of a few 1 MiB slots, the tool
//! maps it through `/proc/<cachescope>/fd/<n>` and copies each full buffer into the next slot,
//! and only an 8-byte token per buffer goes through the pipe. The pipe still orders the
//! buffers and ends the stream (EOF when the tool exits or dies); [`RingReader`] turns the
//! tokens back into the plain byte stream [`super::tool::ToolReader`] decodes, so a ring and
//! a pipe give the same words. The tool waits (a futex on the `consumed` counter) when every
//! slot is full, so the program runs ahead by at most [`SLOTS`] buffers.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use memmap2::MmapMut;

/// Slots in the ring: how many buffers the program may run ahead of cachescope.
pub(crate) const SLOTS: u32 = 4;
/// Words per slot: the tool's buffer (128 Ki words) and its overflow (64 words), rounded up
/// to whole pages.
pub(crate) const SLOT_WORDS: u32 = (1 << 17) + 512;
/// "CSRING2\0", little-endian (version 2 added the threshold).
const MAGIC: u64 = u64::from_le_bytes(*b"CSRING2\0");
/// The slots start one page into the file, after the header.
const DATA: usize = 4096;
/// Header fields, as byte offsets (`cs_ring.c`'s `RingHeader`).
const CONSUMED: usize = 20;
const CLOSED: usize = 24;
const WAITING: usize = 28;
/// The spatial sampler's hash threshold as cachescope last lowered it (u64; all ones until
/// then): the tool reads it after each buffer it puts and lowers its own to it.
const THRESHOLD: usize = 32;
/// The token's tag (`CS_TAG_SLOT`).
const TAG_SLOT: u64 = 0x6;

/// A ring made for one recording, before the tool has opened it.
pub(crate) struct Ring {
    file: File,
    /// Shared with the [`Threshold`] handles, which outlive no mapping.
    map: Arc<MmapMut>,
}

impl Ring {
    /// Creates the shared file and writes its header.
    #[allow(unsafe_code)]
    pub(crate) fn create() -> io::Result<Ring> {
        // SAFETY: a NUL-terminated name and valid flags; the result is checked.
        let fd = unsafe { libc::memfd_create(c"cachescope-ring".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by memfd_create and is owned by nothing else.
        let file = unsafe { File::from_raw_fd(fd) };
        file.set_len((DATA + SLOTS as usize * SLOT_WORDS as usize * 8) as u64)?;
        // SAFETY: the file is this process's own anonymous memory file; its only other user
        // is the tool, which writes a slot only while it owns it (see `RingReader`).
        let mut map = unsafe { MmapMut::map_mut(&file)? };
        map[..8].copy_from_slice(&MAGIC.to_le_bytes());
        map[8..12].copy_from_slice(&SLOTS.to_le_bytes());
        map[12..16].copy_from_slice(&SLOT_WORDS.to_le_bytes());
        map[THRESHOLD..THRESHOLD + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        Ok(Ring {
            file,
            map: Arc::new(map),
        })
    }

    /// The path the tool opens (`--cs-ring=PATH`): this process's descriptor of the file.
    pub(crate) fn path(&self) -> PathBuf {
        format!("/proc/{}/fd/{}", std::process::id(), self.file.as_raw_fd()).into()
    }

    /// The handle through which the spatial sampler's threshold is published to the tool.
    pub(crate) fn threshold(&self) -> Threshold {
        Threshold {
            map: self.map.clone(),
        }
    }

    /// The byte stream of the buffers whose tokens arrive on `tokens`.
    pub(crate) fn reader<R: Read>(self, tokens: R) -> RingReader<R> {
        RingReader {
            tokens,
            ring: self,
            pos: 0,
            end: 0,
            holding: false,
            consumed: 0,
        }
    }

    /// The header's counter at byte `offset`, shared with the tool.
    #[allow(unsafe_code)]
    fn counter(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: the offset is one of the header's aligned u32 fields inside the mapping,
        // which lives as long as `self`; the tool accesses them atomically too.
        unsafe { &*(self.map.as_ptr().add(offset) as *const AtomicU32) }
    }

    /// Wakes the tool if it sleeps waiting for a slot.
    #[allow(unsafe_code)]
    fn wake(&self) {
        if self.counter(WAITING).load(Ordering::SeqCst) != 0 {
            let word = self.counter(CONSUMED) as *const AtomicU32;
            // SAFETY: FUTEX_WAKE on a valid, aligned u32 of a shared mapping; no other memory
            // is touched. Not FUTEX_PRIVATE: the waiter is another process.
            unsafe {
                libc::syscall(libc::SYS_futex, word, libc::FUTEX_WAKE, i32::MAX, 0, 0, 0);
            }
        }
    }
}

/// Publishes the spatial sampler's threshold into a ring's header (docs/recording.md, "The
/// fixed-size variant"): the tool reads it after each buffer it hands over and samples no
/// line whose hash is at or above it from then on. Only ever lowered.
#[derive(Clone)]
pub(crate) struct Threshold {
    map: Arc<MmapMut>,
}

impl Threshold {
    /// Lowers the published threshold to `t` (a higher `t` changes nothing).
    #[allow(unsafe_code)]
    pub(crate) fn lower(&self, t: u64) {
        // SAFETY: offset 32 is the header's aligned u64 field inside the mapping, which the
        // `Arc` keeps alive; the tool reads it atomically.
        let cell = unsafe { &*(self.map.as_ptr().add(THRESHOLD) as *const AtomicU64) };
        cell.fetch_min(t, Ordering::Release);
    }

    /// The threshold published so far.
    #[cfg(test)]
    pub(crate) fn get(&self) -> u64 {
        u64::from_le_bytes(
            self.map[THRESHOLD..THRESHOLD + 8]
                .try_into()
                .expect("8 bytes"),
        )
    }
}

/// Reads the buffers of a ring, in token order, as one byte stream.
pub(crate) struct RingReader<R> {
    tokens: R,
    ring: Ring,
    /// The current buffer is `ring.map[pos..end]`.
    pos: usize,
    end: usize,
    /// Whether a slot is held (returned to the tool when its bytes are read).
    holding: bool,
    /// Buffers finished so far.
    consumed: u32,
}

impl<R: Read> RingReader<R> {
    /// Reads the next token; false at the end of the stream.
    fn next_buffer(&mut self) -> io::Result<bool> {
        let mut token = [0u8; 8];
        let mut got = 0;
        while got < 8 {
            match self.tokens.read(&mut token[got..]) {
                Ok(0) if got == 0 => return Ok(false),
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the record pipe ends inside a ring token",
                    ));
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let w = u64::from_le_bytes(token);
        let (words, slot) = ((w & 0xFF_FFFF) as usize, ((w >> 24) & 0xFFFF) as u32);
        if w >> 60 != TAG_SLOT || slot != self.consumed % SLOTS || words > SLOT_WORDS as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "ring token {w:#018x} is not buffer {} (slot {})",
                    self.consumed,
                    self.consumed % SLOTS
                ),
            ));
        }
        // The tool wrote the slot before the token: its bytes are visible from here on.
        fence(Ordering::Acquire);
        self.pos = DATA + slot as usize * SLOT_WORDS as usize * 8;
        self.end = self.pos + words * 8;
        self.holding = true;
        Ok(true)
    }

    /// Hands the slot just read back to the tool.
    fn release(&mut self) {
        self.holding = false;
        self.consumed = self.consumed.wrapping_add(1);
        self.ring
            .counter(CONSUMED)
            .store(self.consumed, Ordering::SeqCst);
        self.ring.wake();
    }
}

impl<R: Read> Read for RingReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pos < self.end {
                let n = (self.end - self.pos).min(out.len());
                out[..n].copy_from_slice(&self.ring.map[self.pos..self.pos + n]);
                self.pos += n;
                return Ok(n);
            }
            if self.holding {
                self.release();
            }
            if !self.next_buffer()? {
                return Ok(0);
            }
        }
    }
}

impl<R> Drop for RingReader<R> {
    fn drop(&mut self) {
        // A tool still running (cachescope stopped reading early) must not wait for slots.
        self.ring.counter(CLOSED).store(1, Ordering::SeqCst);
        self.ring.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays the tool's part: puts `buffers` into the ring as `cs_ring.c` does and returns
    /// the token stream.
    fn put(ring: &mut Ring, buffers: &[Vec<u64>], first: u32) -> Vec<u8> {
        let map = Arc::get_mut(&mut ring.map).expect("no threshold handle");
        let mut tokens = Vec::new();
        for (k, b) in buffers.iter().enumerate() {
            let slot = (first + k as u32) % SLOTS;
            let at = DATA + slot as usize * SLOT_WORDS as usize * 8;
            for (i, w) in b.iter().enumerate() {
                map[at + 8 * i..at + 8 * i + 8].copy_from_slice(&w.to_le_bytes());
            }
            let token = TAG_SLOT << 60 | b.len() as u64 | (slot as u64) << 24;
            tokens.extend_from_slice(&token.to_le_bytes());
        }
        tokens
    }

    #[test]
    fn buffers_come_back_in_order_and_slots_are_released() {
        let mut ring = Ring::create().expect("memfd");
        let buffers = vec![vec![1, 2, 3], vec![], vec![4; 1000], vec![5, 6]];
        let tokens = put(&mut ring, &buffers, 0);
        let mut reader = ring.reader(&tokens[..]);
        let mut bytes = Vec::new();
        // Small reads, so buffers are read in pieces.
        let mut piece = [0u8; 24];
        loop {
            let n = reader.read(&mut piece).expect("read");
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&piece[..n]);
        }
        let want: Vec<u8> = buffers
            .concat()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        assert_eq!(bytes, want);
        assert_eq!(reader.ring.counter(CONSUMED).load(Ordering::SeqCst), 4);
        drop(reader);
    }

    #[test]
    fn a_token_out_of_order_or_cut_is_an_error() {
        let mut ring = Ring::create().expect("memfd");
        // Buffer 0 claims slot 1.
        let tokens = put(&mut ring, &[vec![1]], 1);
        let err = ring.reader(&tokens[..]).read(&mut [0u8; 8]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let ring = Ring::create().expect("memfd");
        let err = ring
            .reader(&[6u8, 0, 0][..])
            .read(&mut [0u8; 8])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }

    #[test]
    fn the_path_opens_the_same_memory() {
        let ring = Ring::create().expect("memfd");
        let mut head = [0u8; 16];
        File::open(ring.path())
            .and_then(|mut f| f.read_exact(&mut head))
            .expect("open through /proc");
        assert_eq!(&head[..8], b"CSRING2\0");
        assert_eq!(u32::from_le_bytes(head[8..12].try_into().unwrap()), SLOTS);
    }

    #[test]
    fn the_threshold_starts_at_all_ones_and_only_falls() {
        let ring = Ring::create().expect("memfd");
        let t = ring.threshold();
        assert_eq!(t.get(), u64::MAX);
        t.lower(1 << 40);
        t.lower(1 << 50);
        assert_eq!(t.get(), 1 << 40);
        // The tool sees it through its own mapping of the file.
        let mut head = [0u8; 40];
        File::open(ring.path())
            .and_then(|mut f| f.read_exact(&mut head))
            .expect("open through /proc");
        assert_eq!(
            u64::from_le_bytes(head[32..40].try_into().unwrap()),
            1 << 40
        );
    }
}
