//! Brute-force reference caches: plain vectors, written for obviousness, not speed.

use std::collections::{HashSet, VecDeque};

use crate::sim::policy::VictimRng;
use crate::sim::three_c::ThreeCCounts;
use crate::sim::{Geometry, Policy};

/// A naive LRU stack of `capacity` lines, most recent first.
pub struct LruStack {
    pub lines: Vec<u64>,
    pub capacity: usize,
}

impl LruStack {
    pub fn new(capacity: usize) -> LruStack {
        LruStack {
            lines: Vec::new(),
            capacity,
        }
    }

    /// True on a hit.
    pub fn access(&mut self, line: u64) -> bool {
        let hit = match self.lines.iter().position(|&l| l == line) {
            Some(i) => {
                self.lines.remove(i);
                true
            }
            None => false,
        };
        self.lines.insert(0, line);
        self.lines.truncate(self.capacity);
        hit
    }
}

/// One set of a brute-force cache.
enum Set {
    Lru(LruStack),
    Fifo(VecDeque<u64>),
    /// Ways, `None` when empty.
    Random(Vec<Option<u64>>),
    /// Ways and a 1-based heap of tree bits (`bits[n]` true: the victim is in the right half).
    Plru(Vec<Option<u64>>, Vec<bool>),
    /// Ways and their RRPVs.
    Rrip(Vec<Option<u64>>, Vec<u8>),
}

/// RRIP's insertion and duel, written from the paper's prose (M = 2, ε = 1/32, 32 leader sets
/// of each kind, 10-bit PSEL starting at 511).
struct Duel {
    policy: Policy,
    srrip_leaders: HashSet<u64>,
    brrip_leaders: HashSet<u64>,
    psel: u32,
}

/// A set-associative cache built from per-set vectors.
pub struct Brute {
    sets: Vec<Set>,
    assoc: usize,
    rng: Option<VictimRng>,
    duel: Option<Duel>,
}

impl Brute {
    pub fn new(g: Geometry, p: Policy) -> Brute {
        let assoc = g.assoc() as usize;
        let sets = (0..g.sets())
            .map(|_| match p {
                Policy::Lru => Set::Lru(LruStack::new(assoc)),
                Policy::Fifo => Set::Fifo(VecDeque::new()),
                Policy::Random { .. } => Set::Random(vec![None; assoc]),
                Policy::Plru => Set::Plru(vec![None; assoc], vec![false; assoc]),
                Policy::Srrip | Policy::Brrip { .. } | Policy::Drrip { .. } => {
                    Set::Rrip(vec![None; assoc], vec![3; assoc])
                }
                Policy::Opt => unreachable!("OPT is tested in crate::opt"),
            })
            .collect();
        let rng = p.seed().map(VictimRng::new);
        let duel = p.is_rrip().then(|| {
            let n = g.sets();
            let (mut srrip_leaders, mut brrip_leaders) = (HashSet::new(), HashSet::new());
            let k = (n / 2).min(32);
            for i in 0..k {
                let c = n / k;
                srrip_leaders.insert(i * c + i % c);
                brrip_leaders.insert(i * c + (i + c / 2) % c);
            }
            Duel {
                policy: p,
                srrip_leaders,
                brrip_leaders,
                psel: 511,
            }
        });
        Brute {
            sets,
            assoc,
            rng,
            duel,
        }
    }

    /// DRRIP's counter.
    pub fn psel(&self) -> u32 {
        self.duel.as_ref().unwrap().psel
    }

    /// True on a hit.
    pub fn access(&mut self, line: u64) -> bool {
        let n = self.sets.len() as u64;
        let assoc = self.assoc;
        let set = line % n;
        match &mut self.sets[set as usize] {
            Set::Rrip(ways, rrpv) => {
                if let Some(w) = ways.iter().position(|&w| w == Some(line)) {
                    rrpv[w] = 0;
                    return true;
                }
                let d = self.duel.as_mut().unwrap();
                let (srrip_leader, brrip_leader) = (
                    d.srrip_leaders.contains(&set),
                    d.brrip_leaders.contains(&set),
                );
                let dueling = matches!(d.policy, Policy::Drrip { .. });
                if dueling && srrip_leader && d.psel < 1023 {
                    d.psel += 1;
                }
                if dueling && brrip_leader && d.psel > 0 {
                    d.psel -= 1;
                }
                let w = match ways.iter().position(Option::is_none) {
                    Some(w) => w,
                    None => loop {
                        if let Some(w) = rrpv.iter().position(|&v| v == 3) {
                            break w;
                        }
                        rrpv.iter_mut().for_each(|v| *v += 1);
                    },
                };
                let bimodal = match d.policy {
                    Policy::Brrip { .. } => true,
                    Policy::Drrip { .. } if srrip_leader => false,
                    Policy::Drrip { .. } if brrip_leader => true,
                    Policy::Drrip { .. } => d.psel >= 512,
                    _ => false,
                };
                let long = !bimodal || self.rng.as_mut().unwrap().below(32) == 0;
                ways[w] = Some(line);
                rrpv[w] = if long { 2 } else { 3 };
                false
            }
            Set::Lru(s) => s.access(line),
            Set::Fifo(q) => {
                if q.contains(&line) {
                    return true;
                }
                q.push_front(line);
                q.truncate(assoc);
                false
            }
            Set::Random(ways) => {
                if ways.contains(&Some(line)) {
                    return true;
                }
                let w = match ways.iter().position(Option::is_none) {
                    Some(w) => w,
                    None => self.rng.as_mut().unwrap().below(assoc as u32) as usize,
                };
                ways[w] = Some(line);
                false
            }
            Set::Plru(ways, bits) => {
                let (hit, way) = match ways.iter().position(|&w| w == Some(line)) {
                    Some(w) => (true, w),
                    None => {
                        let w = ways.iter().position(Option::is_none).unwrap_or_else(|| {
                            let mut node = 1;
                            while node < assoc {
                                node = 2 * node + usize::from(bits[node]);
                            }
                            node - assoc
                        });
                        ways[w] = Some(line);
                        (false, w)
                    }
                };
                // Walk up from the leaf, pointing each node away from the way used.
                let mut node = way + assoc;
                while node > 1 {
                    bits[node / 2] = node % 2 == 0;
                    node /= 2;
                }
                hit
            }
        }
    }
}

impl Brute {
    /// The lines held by the set `line` maps to.
    pub fn resident(&self, line: u64) -> Vec<u64> {
        let n = self.sets.len() as u64;
        match &self.sets[(line % n) as usize] {
            Set::Lru(s) => s.lines.clone(),
            Set::Fifo(q) => q.iter().copied().collect(),
            Set::Random(ways) | Set::Plru(ways, _) | Set::Rrip(ways, _) => {
                ways.iter().flatten().copied().collect()
            }
        }
    }

    /// True when the cache holds `line`.
    pub fn holds(&self, line: u64) -> bool {
        self.resident(line).contains(&line)
    }

    /// [`Brute::access`], with the line the access evicted, found by comparing the set before
    /// and after.
    pub fn access_evicting(&mut self, line: u64) -> (bool, Option<u64>) {
        let before = self.resident(line);
        let hit = self.access(line);
        let after = self.resident(line);
        let evicted: Vec<u64> = before.into_iter().filter(|l| !after.contains(l)).collect();
        assert!(evicted.len() <= 1, "one access evicted {evicted:?}");
        (hit, evicted.first().copied())
    }

    /// Drops `line` (another core wrote it): its way is left empty, the policy's state as it
    /// was (an LRU or FIFO order closes up around it); whether it was held.
    pub fn invalidate(&mut self, line: u64) -> bool {
        let n = self.sets.len() as u64;
        match &mut self.sets[(line % n) as usize] {
            Set::Lru(s) => {
                let before = s.lines.len();
                s.lines.retain(|&l| l != line);
                s.lines.len() < before
            }
            Set::Fifo(q) => {
                let before = q.len();
                q.retain(|&l| l != line);
                q.len() < before
            }
            Set::Random(ways) | Set::Plru(ways, _) | Set::Rrip(ways, _) => {
                match ways.iter().position(|&w| w == Some(line)) {
                    Some(w) => {
                        ways[w] = None;
                        true
                    }
                    None => false,
                }
            }
        }
    }
}

/// 3C counts computed naively: a brute-force cache, a naive LRU stack and a set of lines seen.
pub fn three_c(g: Geometry, p: Policy, trace: &[u64]) -> (u64, ThreeCCounts) {
    let mut cache = Brute::new(g, p);
    let mut shadow = LruStack::new(g.lines() as usize);
    let mut seen = HashSet::new();
    let mut counts = ThreeCCounts::default();
    let mut misses = 0;
    for &l in trace {
        let hit = cache.access(l);
        let shadow_hit = shadow.access(l);
        let first = seen.insert(l);
        if !hit {
            misses += 1;
            if first {
                counts.cold += 1;
            } else if shadow_hit {
                counts.conflict += 1;
            } else {
                counts.capacity += 1;
            }
        }
    }
    (misses, counts)
}
