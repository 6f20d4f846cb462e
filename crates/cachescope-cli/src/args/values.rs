//! Typed value parsers: each flag's text becomes a validated library value while clap parses,
//! so a bad value fails with clap's error naming the flag (`invalid value 'X' for '--cache
//! <SPEC>': …`) before any work starts.

use anyhow::{Context, Result, bail};
use cachescope::LineSize;
use cachescope::phases::{KChoice, Method};
use cachescope::sim::{Geometry, Policy};
use cachescope::trace::{Format, FormatChoice};
use cachescope::workloads::Workload;

/// A byte size: a number with an optional K, M or G (powers of 1024, optional `iB`/`B`).
pub fn size(s: &str) -> Result<u64> {
    // Through the library's error, which names the parameter: `invalid size: …`.
    Ok(cachescope::units::parse_bytes(s, "size").map_err(cachescope::Error::from)?)
}

/// A count: a number with an optional K, M or G (powers of 1000), e.g. 1M = 1000000.
pub fn count(s: &str) -> Result<u64> {
    Ok(cachescope::units::parse_count(s)?)
}

/// `LO..HI` sizes, 0 < LO <= HI.
pub fn size_range(s: &str) -> Result<(u64, u64)> {
    let (lo, hi) = s
        .split_once("..")
        .with_context(|| format!("{s:?} is not a range; expected LO..HI, e.g. 4K..64M"))?;
    let (lo, hi) = (size(lo)?, size(hi)?);
    if lo == 0 || lo > hi {
        bail!("{s:?}: expected 0 < LO <= HI");
    }
    Ok((lo, hi))
}

/// `--max-memory`: a size above 0.
pub fn memory(s: &str) -> Result<u64> {
    let n = size(s)?;
    if n == 0 {
        bail!("{s:?}: the memory limit must be above 0, e.g. 512M or 4G");
    }
    Ok(n)
}

/// `--line-size`: a size that is a power of two.
pub fn line_size(s: &str) -> Result<LineSize> {
    Ok(LineSize::new(size(s)?)?)
}

/// `--threads`: 1 or more.
pub fn threads(s: &str) -> Result<usize> {
    match s.trim().parse::<usize>() {
        Ok(0) => bail!(
            "0 threads: give at least 1 (default: all {} cores)",
            default_threads()
        ),
        Ok(n) => Ok(n),
        Err(_) => bail!("{s:?} is not a number of threads; expected 1 or more"),
    }
}

/// Every core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `--threads`'s help: the default said once, as what it means and what it is here (clap's
/// own `[default: N]` is hidden, since N is this machine's count, not a constant).
pub fn threads_help() -> String {
    format!(
        "Threads to use [default: every core, {} here]",
        default_threads()
    )
}

/// A built-in workload's name.
pub fn workload(s: &str) -> Result<Workload> {
    Workload::from_name(s).with_context(|| {
        let names: Vec<_> = Workload::ALL.iter().map(|w| w.name()).collect();
        format!(
            "unknown workload {s:?}; expected one of {}",
            names.join(", ")
        )
    })
}

/// `--format`: a trace format to read, or `auto`.
pub fn input_format(s: &str) -> Result<FormatChoice> {
    Ok(s.parse()?)
}

/// `--to`: a trace format to write.
pub fn output_format(s: &str) -> Result<Format> {
    match Format::from_name(s) {
        Some(f) => Ok(f),
        None => bail!(
            "{s:?} is not an output format; expected native, lackey, plain-hex, plain-dec, din, \
             binary or champsim"
        ),
    }
}

/// A cache `SIZE,ASSOC,LINE` (ASSOC `full` for fully associative), e.g. `32K,8,64`.
pub fn geometry(s: &str) -> Result<Geometry> {
    Ok(Geometry::parse(s)?)
}

/// A layout change, `KIND:STRUCTURE[@ELEMENT]=ARGUMENTS` (`whatif --change`).
pub fn change(s: &str) -> Result<cachescope::layout::Change> {
    Ok(s.parse()?)
}

/// `simulate --cores`: 1 to [`cachescope::sim::MAX_CORES`].
pub fn cores(s: &str) -> Result<u32> {
    let max = cachescope::sim::MAX_CORES;
    match s.trim().parse::<u32>() {
        Ok(0) => bail!("0 cores: a machine has at least 1 (--cores 1 for one core)"),
        Ok(n) if n > max => bail!("{n} cores: at most {max}"),
        Ok(n) => Ok(n),
        Err(_) => bail!("{s:?} is not a number of cores; expected 1 to {max}"),
    }
}

/// `simulate --pin THREAD:CORE`: a thread id (from 1) and a core (from 0); whether the core
/// exists is checked against `--cores` later.
pub fn pin(s: &str) -> Result<(cachescope::ThreadId, u32)> {
    let parsed = s
        .split_once(':')
        .and_then(|(t, c)| Some((t.trim().parse::<u32>().ok()?, c.trim().parse::<u32>().ok()?)));
    match parsed {
        Some((0, _)) => bail!("{s:?}: thread ids start at 1 (Valgrind's numbering)"),
        Some(pin) => Ok(pin),
        None => bail!("{s:?} is not THREAD:CORE, e.g. 2:1 (thread 2 on core 1; cores from 0)"),
    }
}

/// A replacement policy's name (`simulate --policy`); the random ones are seeded later, by
/// `--seed` ([`seeded`]).
pub fn policy(s: &str) -> Result<Policy> {
    Ok(Policy::from_name(s, 1)?)
}

/// `policy` with `seed` when it is random (random, BRRIP, DRRIP).
pub fn seeded(policy: Policy, seed: u64) -> Policy {
    match policy {
        Policy::Random { .. } => Policy::Random { seed },
        Policy::Brrip { .. } => Policy::Brrip { seed },
        Policy::Drrip { .. } => Policy::Drrip { seed },
        p => p,
    }
}

/// `phases --k`: a number of phases, or a range LO..HI.
pub fn k(s: &str) -> Result<KChoice> {
    Ok(KChoice::parse(s)?)
}

/// `phases --method`: phase-detection methods, comma separated, or `all`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Methods(pub Vec<Method>);

/// Parses [`Methods`].
pub fn methods(s: &str) -> Result<Methods> {
    Ok(Methods(Method::parse_list(s)?))
}

/// `--program-output`: `stdout`, `stderr`, `null`, or a file.
pub fn program_output(s: &str) -> Result<cachescope::record::ProgramOutput> {
    use cachescope::record::ProgramOutput;
    Ok(match s {
        "stdout" => ProgramOutput::Inherit,
        "stderr" => ProgramOutput::Stderr,
        "null" => ProgramOutput::Null,
        "" => bail!("expected stdout, stderr, null or a file"),
        path => ProgramOutput::File(path.into()),
    })
}

/// `--dtlb`, `--itlb`, `--stlb`: ENTRIES,WAYS,PAGE.
pub fn tlb(s: &str) -> Result<cachescope::tlb::TlbSpec> {
    Ok(cachescope::tlb::TlbSpec::parse(s)?)
}

/// `--pages`: SIZE, LO..HI=SIZE or NAME=SIZE.
pub fn page_rule(s: &str) -> Result<cachescope::tlb::PageRule> {
    Ok(cachescope::tlb::PageRule::parse(s)?)
}

/// `mrc --page`: a page size, a power of two from 64 B to 1G (4K, 2M).
pub fn page(s: &str) -> Result<LineSize> {
    Ok(cachescope::tlb::parse_page(s)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_units() {
        assert_eq!(size("64").unwrap(), 64);
        assert_eq!(size("32K").unwrap(), 32 << 10);
        assert_eq!(size("8MiB").unwrap(), 8 << 20);
        assert_eq!(size("1g").unwrap(), 1 << 30);
        assert!(size("12Q").is_err());
        assert!(size("K").is_err());
        assert!(size("99999999999999999999G").is_err());
        assert_eq!(count("2M").unwrap(), 2_000_000);
        assert_eq!(size_range("4K..64M").unwrap(), (4 << 10, 64 << 20));
        assert!(size_range("64K..4K").is_err());
        assert!(memory("0").is_err());
    }

    #[test]
    fn line_size_must_be_a_power_of_two() {
        assert!(line_size("48").is_err());
        assert_eq!(line_size("128").unwrap().bytes(), 128);
    }

    #[test]
    fn geometry_policy_and_phases_values() {
        assert_eq!(geometry("32K,8,64").unwrap().size_bytes(), 32 << 10);
        assert!(geometry("32K,3,64").is_err());
        assert_eq!(
            seeded(policy("random").unwrap(), 7),
            Policy::Random { seed: 7 }
        );
        assert_eq!(seeded(policy("lru").unwrap(), 7), Policy::Lru);
        assert!(policy("nope").is_err());
        assert_eq!(k("2..8").unwrap().range(), 2..=8);
        assert!(k("0").is_err());
        assert_eq!(methods("all").unwrap().0, Method::ALL.to_vec());
        assert!(methods("nope").is_err());
    }
}
