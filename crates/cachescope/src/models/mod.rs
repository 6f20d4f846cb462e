//! Locality models: miss ratios predicted from sampled or summarised distances, each checked
//! against the exact analyses of [`crate::reuse`] and the simulators of [`crate::sim`].
//!
//! | module | paper | input | output |
//! |---|---|---|---|
//! | [`statcache`] | Berg & Hagersten 2004 | sampled reuse distances ([`crate::sampling`]) | random-replacement miss ratios |
//! | [`statstack`] | Eklöv & Hagersten 2010 | the same samples | LRU miss ratios |
//! | [`hotl`] | Xiang et al. 2013 | the average footprint | the five Filmer metrics, co-run sharing |
//! | [`l2`] | Ji, Ling & Liu | the L1 stack-distance histogram | L2 reuse distances and miss ratios |
//! | [`smith`] | Smith 1976 | a stack-distance distribution | set-associative miss ratios |

pub mod hotl;
pub mod l2;
pub mod smith;
pub mod statcache;
pub mod statstack;
