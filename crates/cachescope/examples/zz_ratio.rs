use cachescope::Batch;
use cachescope::analysis::Analysis;
use cachescope::models::hotl::FootprintAnalysis;
use cachescope::reuse::{Options, StackDistanceAnalysis};
use cachescope::trace::{AccessReader, OpenOptions};
struct Instant(u64);
impl Instant {
    fn now() -> Self {
        Instant(cpu())
    }
    fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(cpu() - self.0)
    }
}
fn cpu() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}
fn main() {
    for p in std::env::args().skip(1) {
        let mut t =
            cachescope::trace::open(std::path::Path::new(&p), &OpenOptions::default()).unwrap();
        let mut bs = Vec::new();
        loop {
            let mut b = Batch::new();
            if t.read_batch(&mut b).unwrap() == 0 {
                break;
            }
            bs.push(b);
        }
        let n: usize = bs.iter().map(|b| b.len()).sum();
        let o = Options::default();
        let mut best = (f64::MAX, f64::MAX);
        for _ in 0..5 {
            let s = Instant::now();
            let mut f = FootprintAnalysis::new(o, &[]).unwrap();
            for b in &bs {
                f.observe(b);
            }
            let mid = s.elapsed().as_secs_f64();
            std::hint::black_box(f.finish());
            eprintln!("observe {mid:.3}s total {:.3}s", s.elapsed().as_secs_f64());
            let a = s.elapsed().as_secs_f64();
            let s = Instant::now();
            let mut d = StackDistanceAnalysis::new(o);
            let o2 = o;
            let _ = o2;
            for b in &bs {
                d.observe(b);
            }
            std::hint::black_box(d.finish());
            let c = s.elapsed().as_secs_f64();
            best = (best.0.min(a), best.1.min(c));
        }
        println!(
            "{p}: {n} refs fp {:.1} M/s sd {:.1} M/s ratio {:.2}",
            n as f64 / best.0 / 1e6,
            n as f64 / best.1 / 1e6,
            best.1 / best.0
        );
    }
}
