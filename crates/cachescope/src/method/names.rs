//! Names of methods and policies, as the command line and the Python package spell them.

use std::str::FromStr;

use super::{CurvePolicy, Method, invalid};
use crate::error::Error;
use crate::sim::Policy;

impl Method {
    /// Every method.
    pub const ALL: [Method; 6] = [
        Method::Exact,
        Method::Statcache,
        Method::Statstack,
        Method::Hotl,
        Method::HotlRt,
        Method::Mini,
    ];

    /// The name `--method` takes: `exact`, `statcache`, `statstack`, `hotl`, `hotl-rt`, `mini`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Statcache => "statcache",
            Method::Statstack => "statstack",
            Method::Hotl => "hotl",
            Method::HotlRt => "hotl-rt",
            Method::Mini => "mini",
        }
    }

    /// Whether the method models a sampling profile (and so can model one without its trace).
    pub fn is_sampled(self) -> bool {
        matches!(self, Method::Statcache | Method::Statstack)
    }
}

impl CurvePolicy {
    /// Every policy.
    pub const ALL: [CurvePolicy; 8] = [
        CurvePolicy::Lru,
        CurvePolicy::Random,
        CurvePolicy::Opt,
        CurvePolicy::Fifo,
        CurvePolicy::Plru,
        CurvePolicy::Srrip,
        CurvePolicy::Brrip,
        CurvePolicy::Drrip,
    ];

    /// The name `--policy` takes: `lru`, `random`, `opt`, `fifo`, `plru`, `srrip`, `brrip`,
    /// `drrip`.
    pub fn name(self) -> &'static str {
        match self {
            CurvePolicy::Lru => "lru",
            CurvePolicy::Random => "random",
            CurvePolicy::Opt => "opt",
            CurvePolicy::Fifo => "fifo",
            CurvePolicy::Plru => "plru",
            CurvePolicy::Srrip => "srrip",
            CurvePolicy::Brrip => "brrip",
            CurvePolicy::Drrip => "drrip",
        }
    }

    /// The name in prose: `LRU`, `random`, `OPT`, `FIFO`, `tree-PLRU`, `SRRIP`, …
    pub fn long_name(self) -> &'static str {
        match self {
            CurvePolicy::Lru => "LRU",
            CurvePolicy::Random => "random",
            CurvePolicy::Opt => "OPT",
            CurvePolicy::Fifo => "FIFO",
            CurvePolicy::Plru => "tree-PLRU",
            CurvePolicy::Srrip => "SRRIP",
            CurvePolicy::Brrip => "BRRIP",
            CurvePolicy::Drrip => "DRRIP",
        }
    }

    /// The simulator's policy (`None` for OPT, which looks ahead and is not simulated per
    /// reference); `seed` drives the random draws.
    pub fn simulated(self, seed: u64) -> Option<Policy> {
        Some(match self {
            CurvePolicy::Lru => Policy::Lru,
            CurvePolicy::Random => Policy::Random { seed },
            CurvePolicy::Opt => return None,
            CurvePolicy::Fifo => Policy::Fifo,
            CurvePolicy::Plru => Policy::Plru,
            CurvePolicy::Srrip => Policy::Srrip,
            CurvePolicy::Brrip => Policy::Brrip { seed },
            CurvePolicy::Drrip => Policy::Drrip { seed },
        })
    }
}

impl FromStr for Method {
    type Err = Error;

    fn from_str(s: &str) -> Result<Method, Error> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| invalid(unknown("method", s, Method::ALL.map(Method::name))))
    }
}

impl FromStr for CurvePolicy {
    type Err = Error;

    fn from_str(s: &str) -> Result<CurvePolicy, Error> {
        CurvePolicy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                invalid(unknown(
                    "policy",
                    s,
                    CurvePolicy::ALL.map(CurvePolicy::name),
                ))
            })
    }
}

fn unknown<const N: usize>(what: &str, s: &str, names: [&str; N]) -> String {
    format!("unknown {what} {s:?}: one of {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
        }
        for p in CurvePolicy::ALL {
            assert_eq!(p.name().parse::<CurvePolicy>().unwrap(), p);
        }
        let e = "LRU".parse::<CurvePolicy>().unwrap_err().to_string();
        assert!(
            e.contains("unknown policy \"LRU\": one of lru, random"),
            "{e}"
        );
        assert!("stat".parse::<Method>().is_err());
    }
}
