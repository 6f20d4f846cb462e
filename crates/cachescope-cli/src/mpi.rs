//! Many machines (`--features mpi`): under `mpirun`/`srun`, a command whose pass is a
//! [`Wire`] plan (`stats`, `footprint`, `mrc --method exact|hotl|hotl-rt`, `hotl`, `l2`
//! without `--simulate`) on a native trace splits the trace's blocks among the ranks; each rank
//! reads its own blocks of the shared file on `--threads` threads, and sends its serialised
//! partial (`cachescope::parallel::wire`) to rank 0, which merges them in rank order and prints
//! the result: exactly the single-process output. StatCache sampling (`mrc --method
//! statcache|statstack`, `sample`) distributes in three steps ([`sample`]). Every other
//! command runs on rank 0 alone.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use cachescope::parallel::wire::{decode_samples, encode_samples};
use cachescope::parallel::{SampleMerge, SampledRange, Wire, split_blocks};
use cachescope::pass::run_indexed_range;
use cachescope::sampling::{Profile, SamplerOptions};
use cachescope::trace::native::read_index;
use cachescope::trace::{Compression, Format, Trace};
use cachescope::{Error, Source};
use mpi::point_to_point::Source as _;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Starts MPI when the process was launched by an MPI launcher (Open MPI's `mpirun`, or a PMI /
/// PMIx launcher such as Slurm's `srun`); the returned universe finalises MPI when dropped.
pub fn init() -> Option<mpi::environment::Universe> {
    let launched = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some());
    if launched { mpi::initialize() } else { None }
}

/// `(rank, size)` of the world when MPI runs with more than one rank.
fn world() -> Option<(SimpleCommunicator, i32, i32)> {
    if !mpi::environment::is_initialized() {
        return None;
    }
    let world = SimpleCommunicator::world();
    let (rank, size) = (world.rank(), world.size());
    (size > 1).then_some((world, rank, size))
}

/// True on every rank but 0 of a multi-rank run: commands that do not distribute stay quiet
/// there, so the result is printed once.
pub fn is_secondary_rank() -> bool {
    world().is_some_and(|(_, rank, _)| rank != 0)
}

/// What an MPI-distributed pass gave this process.
pub enum Outcome<T> {
    /// Not a multi-rank run, or a trace that cannot be split by blocks: run as usual.
    NotDistributed,
    /// Rank 0: the merged result of every rank.
    Merged(T),
    /// Another rank: its part went to rank 0; print nothing.
    Sent,
}

impl<T> Outcome<T> {
    /// The pass hooks' answer ([`cachescope::pass::Hooks::distribute_plan`]): the merged
    /// result on rank 0, `None` to run the pass here (rank 0 of a pass that was not
    /// distributed), and [`PartSent`] on every other rank, which stops its command there.
    pub fn settle(self) -> Result<Option<T>> {
        match self {
            Outcome::Merged(out) => Ok(Some(out)),
            Outcome::Sent => Err(PartSent.into()),
            Outcome::NotDistributed if is_secondary_rank() => Err(PartSent.into()),
            Outcome::NotDistributed => Ok(None),
        }
    }
}

/// Not a failure: this rank's part of a pass went to rank 0 (or the pass runs on rank 0
/// alone), so the command stops here and prints nothing; `cmd::run` turns it into success.
#[derive(Debug)]
pub struct PartSent;

impl std::fmt::Display for PartSent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("this MPI rank sent its part to rank 0")
    }
}

impl std::error::Error for PartSent {}

/// The native trace file every rank reads its own blocks of, or `None` (with a note from rank
/// 0) when `trace` is not one.
fn shared_native_file(trace: &Trace, rank: i32) -> Option<PathBuf> {
    match trace.source() {
        Source::File(p)
            if trace.format() == Some(Format::Native)
                && trace.compression() == Compression::None
                && !trace.is_wrapped() =>
        {
            Some(p.clone())
        }
        _ => {
            if rank == 0 {
                eprintln!(
                    "cachescope: note: MPI splits whole native traces only (cachescope convert \
                     TRACE OUT.cst; not with --thread); rank 0 reads {} alone",
                    trace.source()
                );
            }
            None
        }
    }
}

/// This rank's run of the blocks of the native trace at `path`, split among `size` ranks
/// (`None` when there are fewer blocks than ranks and this rank has none).
fn my_blocks(path: &Path, rank: i32, size: i32) -> cachescope::Result<Option<Range<usize>>> {
    let source = Source::File(path.to_owned());
    let file = std::fs::File::open(path).map_err(|e| Error::io(&source, e))?;
    let (_, index) = read_index(std::io::BufReader::new(file), &source)?;
    Ok(split_blocks(&index.blocks, size as usize)
        .get(rank as usize)
        .cloned())
}

/// Message tags: a partial (empty for a rank without blocks), an error text.
const PARTIAL: u8 = 0;
const FAILED: u8 = 1;

/// The result of `plan` over `trace` from every rank, when running under MPI with a native
/// trace file.
pub fn distribute<P: Wire>(trace: &Trace, plan: &P, threads: usize) -> Result<Outcome<P::Output>> {
    let Some((world, rank, size)) = world() else {
        return Ok(Outcome::NotDistributed);
    };
    let Some(path) = shared_native_file(trace, rank) else {
        return Ok(Outcome::NotDistributed);
    };
    let started = Instant::now();
    // Every rank reads the (small) index and takes its own run of blocks of the shared file.
    let part = my_blocks(&path, rank, size).and_then(|blocks| match blocks {
        Some(r) => run_indexed_range(&path, r, plan, threads),
        None => Ok(None),
    });
    if rank != 0 {
        send_to_rank_0(
            &world,
            rank,
            part.map(|p| p.map(|mut p| plan.encode(&mut p))),
        );
        return Ok(Outcome::Sent);
    }
    let local = started.elapsed();
    let failed = part.as_ref().err().map(|e| anyhow!("MPI rank 0: {e}"));
    let mut acc = part.ok().flatten();
    let mut refs = acc.as_ref().map_or(0, |p| plan.refs(p));
    gather_on_rank_0(&world, size, local, failed, |r, body| {
        let p = plan.decode(body, &Source::Program(format!("MPI rank {r}")))?;
        refs = refs
            .checked_add(plan.refs(&p))
            .ok_or_else(|| anyhow!("MPI rank {r}: more than 2^64 references"))?;
        match acc.as_mut() {
            None => acc = Some(p),
            Some(a) => plan.merge(a, p),
        }
        Ok(())
    })?;
    let acc = acc.unwrap_or_else(|| plan.seal(plan.worker(0)));
    Ok(Outcome::Merged(plan.finish(acc)))
}

/// StatCache sampling of `trace` over every rank, when running under MPI with a native trace
/// file: the three steps of `cachescope::parallel::SampledRange`, each rank on its own run of
/// blocks. (1) Every rank counts its run, and every rank learns every count (an all-gather),
/// hence its offset. (2) Every rank samples its run. (3) The lines watched at the end of the
/// runs pass along the ranks in order, each rank adding its own; each rank finds the first
/// reference in its run to the lines it was handed, and sends its samples to rank 0, which
/// merges them in rank order: the profile one process gives.
pub fn sample(trace: &Trace, options: SamplerOptions, threads: usize) -> Result<Outcome<Profile>> {
    let Some((world, rank, size)) = world() else {
        return Ok(Outcome::NotDistributed);
    };
    let Some(path) = shared_native_file(trace, rank) else {
        return Ok(Outcome::NotDistributed);
    };
    let started = Instant::now();
    let run = my_blocks(&path, rank, size).and_then(|blocks| {
        blocks
            .map(|r| SampledRange::open(&path, r, options, threads))
            .transpose()
    });
    let counted = run.and_then(|run| {
        let n = run.as_ref().map_or(Ok(0), SampledRange::count)?;
        Ok((run, n))
    });
    // Step 1: (ok, count) of every rank.
    let mine = [
        u64::from(counted.is_ok()),
        counted.as_ref().map_or(0, |c| c.1),
    ];
    let mut all = vec![0u64; 2 * size as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    let failed: Vec<i32> = (0..size).filter(|&r| all[2 * r as usize] == 0).collect();
    if !failed.is_empty() {
        // The failing ranks tell rank 0 why; rank 0 reports the first in rank order.
        if let Err(e) = &counted
            && rank != 0
        {
            let text = format!("MPI rank {rank}: {e}");
            world.process_at_rank(0).send(text.as_bytes());
        }
        if rank != 0 {
            return Ok(Outcome::Sent);
        }
        let first = failed[0];
        let mut why = match counted {
            Err(e) => Some(anyhow!("MPI rank 0: {e}")),
            Ok(_) => None,
        };
        for &r in failed.iter().filter(|&&r| r != 0) {
            let (text, _) = world.process_at_rank(r).receive_vec::<u8>();
            if r == first {
                why = Some(anyhow!("{}", String::from_utf8_lossy(&text)));
            }
        }
        return Err(why.expect("a failed rank"));
    }
    let (run, refs) = counted.expect("every rank counted");
    let offset: u64 = (0..rank as usize).map(|r| all[2 * r + 1]).sum();
    // Step 2.
    let mut samples = run.as_ref().map(|run| run.sample(offset, refs)).transpose();
    // Step 3: the lines watched before this run come from the rank before; this run's join
    // them for the rank after (whatever happened here, so that no rank waits forever).
    // Sorted and distinct: the rank before sends them so.
    let lines: Vec<u64> = if rank > 0 {
        world.process_at_rank(rank - 1).receive_vec::<u64>().0
    } else {
        Vec::new()
    };
    if rank + 1 < size {
        let mut next = lines.clone();
        if let Ok(Some(s)) = &samples {
            next.extend(s.watched_lines());
        }
        next.sort_unstable();
        next.dedup();
        world.process_at_rank(rank + 1).send(&next[..]);
    }
    if let (Some(run), Ok(Some(s))) = (&run, &mut samples)
        && let Err(e) = run.resolve(s, &lines)
    {
        samples = Err(e);
    }
    let local = started.elapsed();
    if rank != 0 {
        let msg = samples.map(|s| s.map(|s| encode_samples(&options, &s)));
        send_to_rank_0(&world, rank, msg);
        return Ok(Outcome::Sent);
    }
    let mut merge = SampleMerge::new(options);
    let failed = match samples {
        Ok(Some(s)) => merge
            .absorb(s, &Source::Program("MPI rank 0".into()))
            .err()
            .map(anyhow::Error::from),
        Ok(None) => None,
        Err(e) => Some(anyhow!("MPI rank 0: {e}")),
    };
    gather_on_rank_0(&world, size, local, failed, |r, body| {
        let source = Source::Program(format!("MPI rank {r}"));
        merge.absorb(decode_samples(&options, body, &source)?, &source)?;
        Ok(())
    })?;
    Ok(Outcome::Merged(merge.finish()))
}

/// Sends rank 0 this rank's encoded partial (`None` for a rank without blocks), or why it has
/// none.
fn send_to_rank_0(
    world: &SimpleCommunicator,
    rank: i32,
    part: cachescope::Result<Option<Vec<u8>>>,
) {
    let msg = match part {
        Ok(p) => {
            let mut m = vec![PARTIAL];
            m.extend(p.unwrap_or_default());
            m
        }
        Err(e) => {
            let mut m = vec![FAILED];
            m.extend(format!("MPI rank {rank}: {e}").into_bytes());
            m
        }
    };
    world.process_at_rank(0).send(&msg[..]);
}

/// On rank 0, after its own pass (which took `local` and gave `failure` if it failed):
/// receives every other rank's message in rank order and hands each non-empty partial to
/// `merge`. Every message is taken even after a failure (a rank left blocked in its send
/// would keep the job from finishing); the first failure in rank order is returned. Prints the
/// timing line under `CACHESCOPE_MPI_TIMING`.
fn gather_on_rank_0(
    world: &SimpleCommunicator,
    size: i32,
    local: Duration,
    mut failure: Option<anyhow::Error>,
    mut merge: impl FnMut(i32, &[u8]) -> Result<()>,
) -> Result<()> {
    let (mut waiting, mut merging, mut bytes) = (Duration::ZERO, Duration::ZERO, 0usize);
    for r in 1..size {
        let t = Instant::now();
        let (msg, _) = world.process_at_rank(r).receive_vec::<u8>();
        waiting += t.elapsed();
        bytes += msg.len();
        if failure.is_some() {
            continue;
        }
        let t = Instant::now();
        failure = match msg.split_first() {
            Some((&PARTIAL, [])) => None,
            Some((&PARTIAL, body)) => merge(r, body).err(),
            Some((&FAILED, text)) => Some(anyhow!("{}", String::from_utf8_lossy(text))),
            _ => Some(anyhow!("MPI rank {r} sent an unreadable message")),
        };
        merging += t.elapsed();
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if std::env::var_os("CACHESCOPE_MPI_TIMING").is_some() {
        // For scripts/scale.sh's projection: rank 0's own pass, the wait for the others, and
        // the decode + merge of their partials.
        eprintln!(
            "cachescope: mpi: ranks {size} local_pass_s {:.3} wait_s {:.3} merge_s {:.3} \
             partial_bytes {bytes}",
            local.as_secs_f64(),
            waiting.as_secs_f64(),
            merging.as_secs_f64()
        );
    }
    Ok(())
}
