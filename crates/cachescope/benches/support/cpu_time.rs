//! A criterion measurement of the bench thread's CPU time, for a machine shared with other
//! work: wall time counts the time other processes hold the core, CPU time does not (cache
//! and memory-bandwidth contention still show). Read from `/proc/thread-self/schedstat`
//! (nanoseconds on the CPU); where that file is missing, the bench falls back to wall time.

use std::time::{Duration, Instant};

use criterion::measurement::{Measurement, ValueFormatter, WallTime};

/// Nanoseconds this thread has run, if the kernel says.
fn thread_cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// CPU time of the bench thread (see the module documentation).
pub struct CpuTime;

/// Where an iteration started: CPU nanoseconds, or the wall clock as a fallback.
pub enum Start {
    Cpu(u64),
    Wall(Instant),
}

static WALL: WallTime = WallTime;

impl Measurement for CpuTime {
    type Intermediate = Start;
    type Value = Duration;

    fn start(&self) -> Start {
        thread_cpu_ns().map_or_else(|| Start::Wall(Instant::now()), Start::Cpu)
    }

    fn end(&self, start: Start) -> Duration {
        match (start, thread_cpu_ns()) {
            (Start::Cpu(a), Some(b)) => Duration::from_nanos(b.saturating_sub(a)),
            (Start::Wall(t), _) => t.elapsed(),
            (Start::Cpu(_), None) => Duration::ZERO,
        }
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        WALL.formatter()
    }
}
