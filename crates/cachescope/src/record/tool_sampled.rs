//! Sampled capture: StatCache's sampler run inside cachescope's Valgrind tool, so that only
//! the reuses of the sampled references cross the pipe (`cachescope sample -- PROG`).
//!
//! cachescope draws the sampled positions from the same seeded generator as
//! [`crate::sampling::Sampler`] and writes them into a second pipe, each with the first
//! position at which the thinning no longer keeps its sample ([`Positions::whole`]); the tool
//! counts the references the sampler would count (data references, and instructions when
//! [`SamplerOptions::include_instructions`]), watches each sampled reference's line and writes
//! a record when the line is referenced again while the sample is kept, plus the final count. The profile rebuilt here
//! equals sampling the full trace of the same run with the same options (the positions are
//! the same draws; the tool counts what the trace would list, in the same order).

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::tool_run::{InTool, Launched, POSITIONS, THREAD_POSITIONS, launch, no_trace};
use super::{Finished, ProgramOutput, ToolOptions};
use crate::error::{Error, Result, Source, corrupt, truncated};
use crate::sampling::{
    Drops, MAX_SAMPLES, Profile, SampleCursor, SamplerOptions, THREAD_SAMPLES, Thinning,
    rebuild_drawn, thread_options,
};

const TAG_THREAD: u64 = 0x1;
const TAG_EXEC: u64 = 0x3;
const TAG_REUSE: u64 = 0x4;
/// A reuse record's flag: its window was measured, its distinct lines in bits 0-31.
pub(super) const MEASURED: u64 = 1 << 47;
const TAG_COUNT: u64 = 0x5;
const TAG_HEADER: u64 = 0xE;
const TAG_END: u64 = 0xF;
const VERSION: u64 = super::tool::VERSION;
/// The header's flag for a sampled stream.
const SAMPLED: u64 = 1 << 17;

/// Runs `program` under the tool sampling with `options` (the program's standard output goes to
/// `output`), and returns the profile of the run, whose source is the command line, and how the
/// program ended. A program that execs another is sampled up to the exec (the sampled stream
/// does not follow it), which [`Finished::notes`] says.
///
/// Errors: the tool cannot run, the program cannot be started, or the run was cut short
/// (Valgrind killed: no end record), as for [`super::Recording::start_tool`]'s stream.
pub fn sample_program(
    program: &OsStr,
    args: &[OsString],
    options: SamplerOptions,
    output: ProgramOutput,
) -> Result<(Profile, Finished)> {
    options.validate()?;
    let opts = ToolOptions {
        events: false,
        instr: options.include_instructions,
        output,
        trace_children: false,
        collect_at_start: true,
        toggle_collect: Vec::new(),
        calls: false,
    };
    let Launched {
        mut recording,
        input,
        log,
        source,
        ..
    } = launch(
        program,
        args,
        &opts,
        InTool {
            reuse: Some(&options),
            spatial: None,
            threads: false,
            windows: false,
        },
    )?;
    let positions = Positions::whole(&recording.dir.join(POSITIONS), &options, 0);
    let read = read_stream(BufReader::with_capacity(1 << 16, input), &source, &options);
    positions.stop();
    let stream = match read {
        Ok(s) => s,
        Err(e) => return Err(no_trace(e, &mut recording, &log)),
    };
    let profile = rebuild(options, &stream, &source)?.with_source(source.to_string());
    if stream.exec {
        recording.notes.push(super::tool::EXEC_NOT_FOLLOWED.into());
    }
    Ok((profile, recording.finish()?))
}

/// What the tool reported: the reuses `(sampled position, reuse position)` and the count.
#[derive(Debug, Default)]
pub(super) struct Stream {
    pub(super) reuses: Vec<(u64, u64)>,
    /// `(sampled position, distinct lines between)` of the reuses whose window the tool
    /// measured (`--cs-sample-windows`, `cs_windows.c`), and the references those windows
    /// read: the budget ([`Windows`]) applied here too, as the tool applies it.
    ///
    /// [`Windows`]: crate::sampling::Windows
    measured: Vec<(u64, u32)>,
    spent: u64,
    pub(super) count: u64,
    /// The program exec'd another, which was not followed.
    pub(super) exec: bool,
    /// The thinning level reached ([`crate::sampling::Sampler::with_max_samples`]).
    level: u32,
    /// The decaying rule's cap of a floored sampler ([`crate::sampling::Sampler::floored`],
    /// the sampled report's), else 0.
    floor: u64,
}

impl Stream {
    /// Adds the reuse at position `i` of the sample at `j`, and its `measured` window's
    /// distinct lines, thinning the reuses kept as the in-process sampler would (its level
    /// follows the references counted, `i` so far), so they stay about
    /// [`crate::sampling::MAX_SAMPLES`] whatever the run's length.
    pub(super) fn push_reuse(
        &mut self,
        options: &SamplerOptions,
        (j, i): (u64, u64),
        measured: Option<u32>,
    ) {
        let thin = thinning(options, self.floor);
        let level = thin.level(options.rate, i);
        if level > self.level {
            self.level = level;
            self.reuses.retain(|&(j, _)| thin.keeps(j, level));
            self.measured.retain(|&(j, _)| thin.keeps(j, level));
        }
        if thin.keeps(j, self.level) {
            self.reuses.push((j, i));
            // The trace's sampler counts the windows of the samples kept at `i`, in this
            // order, while within its budget: so does the tool (told where each sample stops
            // being kept, `Positions::whole`), and so does this, which then keeps them all.
            if measured.is_some() && crate::sampling::Windows::within_budget(self.spent, i) {
                self.spent += i - j - 1;
                self.measured.extend(measured.map(|d| (j, d)));
            }
        }
    }

    /// The stream of a floored sampler's tool ([`crate::sampling::Sampler::floored`] with
    /// `cap`): the sampled report's whole-stream reuses.
    pub(super) fn floored(cap: u64) -> Stream {
        Stream {
            floor: cap,
            ..Stream::default()
        }
    }
}

/// The in-process sampler's thinning of a stream with `floor` ([`Stream::floor`]).
fn thinning(options: &SamplerOptions, floor: u64) -> Thinning {
    if floor == 0 {
        Thinning::new(options.seed, MAX_SAMPLES)
    } else {
        Thinning::floored(options.seed, MAX_SAMPLES, floor, options.rate)
    }
}

/// The positions a floored sampler with `cap` draws (0: a plain one, [`SampleCursor::new`]).
pub(super) fn cursor(options: &SamplerOptions, floor: u64) -> SampleCursor {
    if floor == 0 {
        SampleCursor::new(options)
    } else {
        SampleCursor::floored(options, floor)
    }
}

/// The thread writing the sampled positions into one of the tool's positions pipes.
pub(super) struct Positions {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    writer: Option<std::thread::JoinHandle<()>>,
}

impl Positions {
    /// Starts writing the positions `cursor` draws into the pipe at `path`, one word each
    /// (a thread's sampler's pipe, `cs_sample_threads.c`).
    pub(super) fn start(path: &Path, cursor: SampleCursor) -> Positions {
        Positions::writing(path, move |w| write_positions(w, cursor, None))
    }

    /// The whole stream's positions for a sampler with `options` and `floor`
    /// ([`Stream::floor`]: 0 for `sample -- P`'s, [`crate::sampling::REPORT_FLOOR`] for the
    /// sampled report's), each with the first reuse position at which its sample is no longer
    /// kept (`u64::MAX`: never), so the tool watches and measures only what
    /// [`Stream::push_reuse`] keeps (`cs_sample.c`'s `read_position`). A position its thinning
    /// drops where it is drawn is in no profile and is left out.
    pub(super) fn whole(path: &Path, options: &SamplerOptions, floor: u64) -> Positions {
        let drops = Drops::new(thinning(options, floor), options.rate);
        let cursor = cursor(options, floor);
        Positions::writing(path, move |w| write_positions(w, cursor, Some(drops)))
    }

    /// Starts `write` on the pipe at `path` in a thread.
    fn writing(path: &Path, write: impl FnOnce(&mut dyn Write) + Send + 'static) -> Positions {
        let path = path.to_path_buf();
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (path, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || {
                let Ok(file) = OpenOptions::new().write(true).open(&path) else {
                    return;
                };
                write(&mut Stopping {
                    out: BufWriter::with_capacity(1 << 12, file),
                    stop,
                })
            })
        };
        Positions {
            path,
            stop,
            writer: Some(writer),
        }
    }

    /// Once the tool has closed its stream (or never opened it): lets the writer see that,
    /// and waits for it (as dropping does).
    pub(super) fn stop(self) {}
}

impl Drop for Positions {
    fn drop(&mut self) {
        let Some(writer) = self.writer.take() else {
            return;
        };
        self.stop.store(true, Ordering::SeqCst);
        while !writer.is_finished() {
            drop(open_reader_nonblocking(&self.path));
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = writer.join();
    }
}

/// A pipe's writer that fails once `stop` is set.
struct Stopping {
    out: BufWriter<File>,
    stop: Arc<AtomicBool>,
}

impl Write for Stopping {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::SeqCst) {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        }
        self.out.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// Writes the positions `cursor` draws, in order, until `w` fails (the tool closed its end,
/// or the run is over), then `u64::MAX`. With `drops`, pairs of words: only the positions kept
/// where drawn, each with the first position at which it is no longer kept.
fn write_positions(w: &mut dyn Write, mut cursor: SampleCursor, drops: Option<Drops>) {
    let mut put = |words: &[u64]| words.iter().try_for_each(|x| w.write_all(&x.to_le_bytes()));
    loop {
        let at = cursor.next();
        let words = match &drops {
            _ if at == u64::MAX => [at; 2],
            None => [at, 0],
            Some(d) if d.kept_when_drawn(at) => [at, d.first_dropped(at)],
            // Dropped at its own level: kept at no later one either.
            Some(_) => {
                cursor.skip_to(at);
                continue;
            }
        };
        let width = if drops.is_some() { 2 } else { 1 };
        if put(&words[..width]).is_err() || at == u64::MAX {
            return;
        }
        cursor.skip_to(at);
    }
}

/// Opens the read end without blocking (unblocks a writer waiting in `open`).
fn open_reader_nonblocking(path: &Path) -> Option<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()
}

/// Decodes a sampled stream to its end record (or to an exec's count, when the program
/// became another without being traced).
fn read_stream(mut input: impl Read, source: &Source, options: &SamplerOptions) -> Result<Stream> {
    let mut words = 0u64;
    let mut next = |words: &mut u64| -> Result<Option<u64>> {
        let mut b = [0u8; 8];
        let mut got = 0;
        while got < 8 {
            match input.read(&mut b[got..]) {
                Ok(0) if got == 0 => return Ok(None),
                Ok(0) => return Err(truncated(source, "the stream ends inside a word")),
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io(source, e)),
            }
        }
        *words += 1;
        Ok(Some(u64::from_le_bytes(b)))
    };
    let Some(header) = next(&mut words)? else {
        return Err(Error::Empty(source.clone()));
    };
    if header >> 60 != TAG_HEADER || header & 0xFFFF != VERSION || header & SAMPLED == 0 {
        return Err(corrupt(source, "not a sampled stream of cachescope's tool"));
    }
    let mut stream = Stream::default();
    let mut exec = false;
    loop {
        let before = words;
        let Some(w) = next(&mut words)? else {
            if exec {
                stream.exec = true;
                return Ok(stream);
            }
            return Err(truncated(
                source,
                "the sampled stream ended without its end record (Valgrind was killed or \
                 failed); no profile of a partial run is made",
            ));
        };
        let mut payload = |n| -> Result<u64> {
            next(&mut words)?.ok_or_else(|| truncated(source, format!("{n} ends early")))
        };
        match w >> 60 {
            TAG_THREAD => {}
            TAG_EXEC => exec = w & 1 == 0,
            TAG_REUSE => {
                let j = payload("a reuse record")?;
                let i = payload("a reuse record")?;
                stream.push_reuse(options, (j, i), measured(w));
            }
            TAG_COUNT => stream.count = payload("a count record")?,
            TAG_END if w & 0xFFFF_FFFF_FFFF == before & 0xFFFF_FFFF_FFFF => return Ok(stream),
            _ => return Err(corrupt(source, format!("unexpected word {w:#018x}"))),
        }
    }
}

/// The distinct lines of the window a reuse record `w` carries (`CS_REUSE_MEASURED`), if any.
pub(super) fn measured(w: u64) -> Option<u32> {
    (w & MEASURED != 0).then_some(w as u32)
}

/// The profile of sampling `stream`'s run: every position drawn up to the count, reused or
/// dangling, with the windows measured.
pub(super) fn rebuild(
    options: SamplerOptions,
    stream: &Stream,
    source: &Source,
) -> Result<Profile> {
    // The in-process sampler's thinning at the end ([`Stream::push_reuse`]).
    let drawn = (
        cursor(&options, stream.floor),
        thinning(&options, stream.floor),
    );
    let level = drawn.1.level(options.rate, stream.count);
    let measured = stream
        .measured
        .iter()
        .filter(|&&(j, _)| drawn.1.keeps(j, level));
    let measured = measured.copied().collect();
    Ok(
        rebuild_drawn(options, drawn, &stream.reuses, stream.count, source)?
            .with_measured(measured),
    )
}

/// Writes each thread's positions (the same draws for all: [`Sampler::decaying`]'s with the
/// run's seed) into `dir`'s second pipe, for the tool's per-thread sampler.
///
/// [`Sampler::decaying`]: crate::sampling::Sampler::decaying
pub(super) fn thread_positions(dir: &Path, reuse: &SamplerOptions) -> Positions {
    let cursor = SampleCursor::decaying(thread_options(reuse).seed, THREAD_SAMPLES);
    Positions::start(&dir.join(THREAD_POSITIONS), cursor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sampling::{NextUse, Sample, ThreadReuses};

    fn words(w: &[u64]) -> Vec<u8> {
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    const HEADER: u64 = (TAG_HEADER << 60) | SAMPLED | VERSION;

    #[test]
    fn a_stream_decodes_to_its_reuses_and_count() {
        let bytes = words(&[
            HEADER,
            (TAG_THREAD << 60) | 1,
            TAG_REUSE << 60,
            3,
            9,
            // Measured: 4 distinct lines between (cs_windows.c).
            (TAG_REUSE << 60) | MEASURED | 4,
            5,
            11,
            TAG_COUNT << 60,
            12,
            (TAG_END << 60) | 10,
        ]);
        let s = read_stream(&bytes[..], &Source::Stdin, &SamplerOptions::default()).unwrap();
        assert_eq!((&s.reuses[..], s.count), (&[(3, 9), (5, 11)][..], 12));
        assert_eq!(s.measured, [(5, 4)]);
    }

    #[test]
    fn a_cut_stream_or_a_wrong_end_count_is_an_error() {
        let cut = words(&[HEADER, TAG_COUNT << 60, 12]);
        assert!(read_stream(&cut[..], &Source::Stdin, &SamplerOptions::default()).is_err());
        let wrong = words(&[HEADER, TAG_COUNT << 60, 12, (TAG_END << 60) | 2]);
        assert!(read_stream(&wrong[..], &Source::Stdin, &SamplerOptions::default()).is_err());
        let full = words(&[(TAG_HEADER << 60) | VERSION]);
        assert!(read_stream(&full[..], &Source::Stdin, &SamplerOptions::default()).is_err());
    }

    #[test]
    fn rebuilding_at_rate_one_gives_every_position() {
        let options = SamplerOptions {
            rate: 1.0,
            ..SamplerOptions::default()
        };
        // Lines a b a: 1 reused at 3, 2 and 3 dangle.
        let stream = Stream {
            reuses: vec![(1, 3)],
            measured: Vec::new(),
            spent: 0,
            count: 3,
            exec: false,
            level: 0,
            floor: 0,
        };
        let p = rebuild(options, &stream, &Source::Stdin).unwrap();
        let expect = [
            Sample {
                position: 1,
                next: NextUse::Reuse { distance: 1 },
            },
            Sample {
                position: 2,
                next: NextUse::Dangling { age: 1 },
            },
            Sample {
                position: 3,
                next: NextUse::Dangling { age: 0 },
            },
        ];
        assert_eq!(p.samples(), expect);
        let bad = Stream {
            reuses: vec![(5, 6)],
            measured: Vec::new(),
            spent: 0,
            count: 6,
            exec: false,
            level: 0,
            floor: 0,
        };
        let sparse = SamplerOptions {
            rate: 1e-6,
            ..options
        };
        assert!(rebuild(sparse, &bad, &Source::Stdin).is_err());
    }

    #[test]
    fn a_long_stream_is_thinned_as_the_in_process_sampler_thins() {
        use crate::analysis::Analysis;
        // At rate 1, 1.5 M references pass MAX_SAMPLES: one halving.
        let options = SamplerOptions {
            rate: 1.0,
            seed: 5,
            ..SamplerOptions::default()
        };
        let n = 1_500_000u64;
        let batch: crate::Batch = (0..n)
            .map(|i| crate::Access::load(((i * 2_654_435_761) % 7000) << 6, 8))
            .collect();
        let mut all = crate::sampling::Sampler::new(options)
            .unwrap()
            .with_max_samples(u64::MAX);
        all.observe(&batch);
        let mut bounded = crate::sampling::Sampler::new(options).unwrap();
        bounded.observe(&batch);
        let expected = bounded.finish();
        assert_eq!(expected.rate(), 0.5);
        // The tool's records, in the order of the reuses.
        let mut reuses: Vec<(u64, u64)> = all
            .finish()
            .samples()
            .iter()
            .filter_map(|s| s.distance().map(|d| (s.position, s.position + d + 1)))
            .collect();
        reuses.sort_unstable_by_key(|&(_, i)| i);
        let mut stream = Stream::default();
        for (j, i) in reuses {
            stream.push_reuse(&options, (j, i), None);
        }
        stream.count = n;
        assert!(stream.reuses.len() as u64 <= MAX_SAMPLES + MAX_SAMPLES / 8);
        assert_eq!(rebuild(options, &stream, &Source::Stdin).unwrap(), expected);
    }

    /// Brute force: the tool's records of the sampled report's floored positions (every
    /// drawn position's next reference while the sample is kept there, as [`Drops`] tells
    /// the tool, in the order of the reuses, and the distinct lines between for those within
    /// the windows' ring) rebuild the profile [`Sampler::floored`] with its windows makes of
    /// the same references, below the floor's end (rate `2^−D`) and past it (the rate),
    /// measured distances included; and the positions the tool is handed are the trace's
    /// sampler's draws. Every record, the thinned samples' too, rebuilds it as well.
    ///
    /// [`Sampler::floored`]: crate::sampling::Sampler::floored
    #[test]
    fn a_floored_streams_records_rebuild_the_floored_samplers_profile() {
        use crate::analysis::Analysis;
        let (cap, lines) = (1024u64, 5000u64);
        // Random lines: reuse times and distances of every length, a few past the ring.
        let line = |i: u64| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % lines;
        for (n, seed) in [(40_000u64, 2u64), (300_000, 3)] {
            let options = SamplerOptions {
                rate: 0.01,
                seed,
                ..SamplerOptions::default()
            };
            let batch: crate::Batch = (0..n)
                .map(|i| crate::Access::load(line(i) << 6, 8))
                .collect();
            let s = crate::sampling::Sampler::floored(options, cap).unwrap();
            let mut s = s.with_windows();
            s.observe(&batch);
            let want = s.finish();
            assert!(want.measured() > 100, "n {n}: {} measured", want.measured());
            let mut drawn = cursor(&options, cap);
            let mut reuses = Vec::new();
            while drawn.next() <= n {
                let j = drawn.next();
                if let Some(i) = (j + 1..=n).find(|&i| line(i - 1) == line(j - 1)) {
                    reuses.push((j, i));
                }
                drawn.skip_to(j);
            }
            reuses.sort_unstable_by_key(|&(_, i)| i);
            let drops = Drops::new(thinning(&options, cap), options.rate);
            let (mut all, mut kept, mut skipped) = (Stream::floored(cap), Stream::floored(cap), 0);
            for (j, i) in reuses {
                // Positions from 1: the references between are lines j..i − 1 of `line`.
                let between = (j..i - 1).map(line);
                let d = between.collect::<std::collections::HashSet<u64>>().len() as u32;
                let measured = (i - j <= crate::sampling::RING).then_some(d);
                all.push_reuse(&options, (j, i), measured);
                // What the tool writes: nothing for a sample no longer kept.
                if !drops.kept_when_drawn(j) || i >= drops.first_dropped(j) {
                    skipped += 1;
                    continue;
                }
                kept.push_reuse(&options, (j, i), measured);
            }
            assert!(skipped > 1000, "n {n}: {skipped} skipped");
            for mut stream in [all, kept] {
                stream.count = n;
                let got = rebuild(options, &stream, &Source::Stdin).unwrap();
                assert_eq!(got, want, "n {n}");
            }
        }
    }

    /// [`Positions::whole`] leaves out only positions no profile keeps: a position the
    /// floored thinning drops at the level of its own draw is dropped at every later level
    /// (here with a cap of 64 samples, so that the levels climb within a few thousand
    /// references).
    #[test]
    fn a_position_thinned_when_drawn_stays_thinned() {
        let (rate, floor) = (0.05, 16);
        let thin = Thinning::floored(3, 64, floor, rate);
        let mut dropped = 0;
        for j in 1..20_000u64 {
            if thin.keeps(j, thin.level(rate, j)) {
                continue;
            }
            dropped += 1;
            for n in [j + 1, j + 100, 2 * j, 50 * j, 1 << 40] {
                assert!(!thin.keeps(j, thin.level(rate, n)), "j {j} n {n}");
            }
        }
        assert!(dropped > 10_000, "{dropped} dropped");
    }

    /// Brute force: the tool's per-thread records (every drawn position's next reference by
    /// the same thread) rebuild each thread's profile as [`Sampler::decaying`] makes it over
    /// that thread's references, thinning included (a thread past [`THREAD_SAMPLES`]).
    ///
    /// [`Sampler::decaying`]: crate::sampling::Sampler::decaying
    #[test]
    fn each_threads_records_rebuild_its_decaying_samplers_profile() {
        use crate::analysis::Analysis;
        let reuse = SamplerOptions {
            rate: 1e-3,
            seed: 4,
            ..SamplerOptions::default()
        };
        let mut records = ThreadReuses::default();
        for (thread, n, lines) in [(1u32, 300_000u64, 9000u64), (3, 5_000, 70)] {
            // Random lines: reuse times and distances of every length, a few past the ring.
            let line = |i: u64| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % lines;
            let batch: crate::Batch = (0..n)
                .map(|i| crate::Access::load(line(i) << 6, 8))
                .collect();
            let mut s = crate::sampling::Sampler::decaying(reuse, THREAD_SAMPLES).unwrap();
            s.observe(&batch);
            let want = s.finish().with_source(Source::Stdin.to_string());
            let mut cursor = SampleCursor::decaying(4, THREAD_SAMPLES);
            while cursor.next() <= n {
                let j = cursor.next();
                if let Some(i) = (j + 1..=n).find(|&i| line(i - 1) == line(j - 1)) {
                    records.push(thread, j, i);
                }
                cursor.skip_to(j);
            }
            records.count(thread, n);
            let got = records.profiles(&reuse, &Source::Stdin).unwrap();
            assert_eq!(got[&thread], want, "thread {thread}");
        }
        records.push(5, 1, 2);
        assert!(
            records.profiles(&reuse, &Source::Stdin).is_err(),
            "no count"
        );
    }

    /// The spatial stream's per-thread records (argument: the thread) decode into
    /// [`ThreadReuses`], beside the whole stream's reuse records; a record out of order is
    /// refused when the profiles are made.
    #[test]
    fn a_spatial_stream_carries_each_threads_records() {
        use crate::record::tool_spatial::SpatialReader;
        use crate::spatial::SpatialOptions;
        use crate::trace::AccessReader;
        let header = (TAG_HEADER << 60) | SAMPLED | (1 << 18) | VERSION;
        let body = [
            header,
            (TAG_THREAD << 60) | 1,
            (TAG_REUSE << 60) | 1,
            1,
            3,
            TAG_REUSE << 60,
            2,
            5,
            (TAG_THREAD << 60) | 2,
            (TAG_REUSE << 60) | 2,
            2,
            4,
            (TAG_COUNT << 60) | 1,
            4,
            (TAG_COUNT << 60) | 2,
            6,
        ];
        let mut w = body.to_vec();
        w.push((TAG_END << 60) | w.len() as u64);
        let reader = |w: &[u64]| {
            SpatialReader::new(
                std::io::Cursor::new(words(w)),
                Source::Stdin,
                SpatialOptions::default(),
                None,
            )
            .unwrap()
        };
        let mut r = reader(&w);
        let mut b = crate::Batch::new();
        while r.read_batch(&mut b).unwrap() > 0 {}
        let mut want = ThreadReuses::default();
        want.push(1, 1, 3);
        want.push(2, 2, 4);
        want.count(1, 4);
        want.count(2, 6);
        assert_eq!(r.thread_reuses(), Some(want));
        let profiles = r.thread_reuses();
        assert!(profiles.is_none(), "taken once");
        // Thread 2's sample at 4 reused at 2: out of order.
        let mut bad = body.to_vec();
        bad[10..12].copy_from_slice(&[4, 2]);
        bad.push((TAG_END << 60) | bad.len() as u64);
        let mut r = reader(&bad);
        while r.read_batch(&mut b).unwrap() > 0 {}
        let options = SamplerOptions::default();
        assert!(
            r.thread_reuses()
                .unwrap()
                .profiles(&options, &Source::Stdin)
                .is_err()
        );
    }
}
