//! Where a report's time goes: one pass over a trace with every analysis of
//! [`Collector::analyses`] timed on its own (one thread), then the models and figures.
//!
//! ```sh
//! cargo run --release -p cachescope-report --example report_stages -- TRACE
//! ```

use std::time::{Duration, Instant};

use cachescope::analysis::Analysis;
use cachescope::batch::Batch;
use cachescope::trace::{OpenOptions, open};
use cachescope_report::collect::{CollectOptions, Collector};

/// An analysis with the time spent in its `observe`.
struct Timed<'a> {
    inner: &'a mut dyn Analysis,
    spent: Duration,
}

impl Analysis for Timed<'_> {
    fn observe(&mut self, batch: &Batch) {
        let t = Instant::now();
        self.inner.observe(batch);
        self.spent += t.elapsed();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: report_stages TRACE")?;
    let mut trace = open(path.as_ref(), &OpenOptions::default())?;
    let mut collector = Collector::new(CollectOptions::default())?;
    // In the order of `Collector::analyses`.
    let names = [
        "three-c+two-level+phases",
        "fifo+srrip+drrip",
        "sampler",
        "footprint+reuse-time",
        "opt spill",
        "kinds",
    ];
    let started = Instant::now();
    let (spent, refs) = {
        let mut timed: Vec<Timed> = collector
            .analyses()
            .into_iter()
            .map(|inner| Timed {
                inner,
                spent: Duration::ZERO,
            })
            .collect();
        let mut refs: Vec<&mut dyn Analysis> =
            timed.iter_mut().map(|t| t as &mut dyn Analysis).collect();
        let n = cachescope::pass::Pass::new(1)
            .run(&mut trace, cachescope::pass::Analyses(&mut refs))?;
        drop(refs);
        (timed.iter().map(|t| t.spent).collect::<Vec<_>>(), n)
    };
    let pass = started.elapsed();
    let t = Instant::now();
    // Each stage of `finish` (one thread: one after another) timed by when it is seen done.
    let stages = collector.stages();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (stages, done) = (stages.clone(), done.clone());
        std::thread::spawn(move || {
            let mut ended = vec![None; stages.len()];
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                for (e, s) in ended.iter_mut().zip(&stages) {
                    if e.is_none() && s.state() == cachescope::stages::StageState::Done {
                        *e = Some(t.elapsed());
                    }
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            ended
        })
    };
    let report = collector.finish(&trace)?;
    let models = t.elapsed();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let ended = watcher.join().map_err(|_| "watcher panicked")?;
    let t = Instant::now();
    let figures = cachescope_report::figures::render_all(&report)?;
    let html = cachescope_report::html::render(&report, &figures)?;
    let drawing = t.elapsed();
    let observed: Duration = spent.iter().sum();
    println!("{refs} accesses, {} data references", report.stats.refs);
    for (name, s) in names.iter().zip(&spent) {
        println!("{name:<24} {:>8.2} s", s.as_secs_f64());
    }
    println!(
        "{:<24} {:>8.2} s",
        "decode (rest of pass)",
        (pass - observed).as_secs_f64()
    );
    println!("{:<24} {:>8.2} s", "models (finish)", models.as_secs_f64());
    for (s, e) in stages.iter().zip(&ended) {
        let at = e.unwrap_or(models).as_secs_f64();
        println!("  {:<22} done at {at:>6.2} s", s.name());
    }
    println!(
        "{:<24} {:>8.2} s ({} B of html)",
        "figures + html",
        drawing.as_secs_f64(),
        html.len()
    );
    Ok(())
}
