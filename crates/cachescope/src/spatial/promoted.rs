//! [`Promoted`]: the lines the Valgrind tool promoted past its line filter in a live sampled
//! run (`crates/cachescope-valgrind/tool/cs_share.c`: written by a second thread, then every
//! reference to them passed), as the reader of its stream (`record::tool_spatial`) meets
//! them. The sharing table of a live `report --sampled` marks its lines from it
//! (`sharing::promote::mark_live`); a type of its own here because the reader's trait
//! ([`crate::trace::AccessReader::pass_promoted`]) hands it over.

use std::collections::HashSet;

/// Lines → data references of the stream before the reference that promoted each.
pub type PromotedLines = hashbrown::HashMap<u64, u64, foldhash::fast::FixedState>;

/// What the tool promoted and what its detector did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Promoted {
    /// The promoted lines, each with where the write that promoted it came.
    pub lines: PromotedLines,
    /// The thread that wrote each promoted line before the promoting write.
    pub before: hashbrown::HashMap<u64, u32, foldhash::fast::FixedState>,
    /// Those of them the filter kept in the sample at the end of the stream.
    pub sampled: HashSet<u64>,
    /// Lines the tool's table holds at once (this and the next three from its summary
    /// record at the end of the stream: zero before).
    pub table_lines: u64,
    /// Written lines whose last writer the table lost to another line.
    pub evicted: u64,
    /// Lines written by a second thread but not promoted, the cap reached.
    pub dropped: u64,
    /// The cap on promoted lines.
    pub max_lines: u64,
}
