//! Compares a lackey log with the Valgrind tool's record stream of the same run, record for
//! record, streaming both (memory stays constant): `scripts/recording.sh` uses it for the
//! equivalence table of docs/recording.md.
//!
//! ```text
//! cargo run --release -p cachescope --example tool_vs_lackey -- LACKEY.log TOOL.bin
//! ```
//!
//! Prints one line: `records_lackey records_tool equal differing differing_same_kind_size_pc
//! loads_differing first_difference`.

use std::fs::File;
use std::io::BufReader;

use cachescope::record::tool::ToolReader;
use cachescope::trace::{AccessReader, lackey};
use cachescope::{AccessKind, Batch, Source};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [lk, bin] = &args[..] else {
        return Err("usage: tool_vs_lackey LACKEY.log TOOL.bin".into());
    };
    let mut a = lackey::Reader::new(
        BufReader::with_capacity(1 << 20, File::open(lk)?),
        Source::File(lk.into()),
        lackey::Options::default(),
    );
    let mut b = ToolReader::new(File::open(bin)?, Source::File(bin.into()));
    let (mut ba, mut bb) = (Batch::new(), Batch::new());
    let (mut ia, mut ib) = (0usize, 0usize);
    let (mut na, mut nb, mut equal, mut differ, mut same_shape, mut loads) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut first = String::from("-");
    loop {
        if ia == ba.len() {
            a.read_batch(&mut ba)?;
            ia = 0;
        }
        if ib == bb.len() {
            b.read_batch(&mut bb)?;
            ib = 0;
        }
        match (ia < ba.len(), ib < bb.len()) {
            (false, false) => break,
            (true, false) => {
                na += (ba.len() - ia) as u64;
                ia = ba.len();
                continue;
            }
            (false, true) => {
                nb += (bb.len() - ib) as u64;
                ib = bb.len();
                continue;
            }
            (true, true) => {}
        }
        let n = (ba.len() - ia).min(bb.len() - ib);
        for k in 0..n {
            let (x, y) = (ba.get(ia + k), bb.get(ib + k));
            if x == y {
                equal += 1;
            } else {
                differ += 1;
                if x.kind == y.kind && x.size == y.size && x.pc == y.pc {
                    same_shape += 1;
                    loads += u64::from(x.kind == AccessKind::Load);
                }
                if first == "-" {
                    first = format!("#{}:{:?}/{:?}", na + k as u64, x, y).replace(' ', "");
                }
            }
        }
        ia += n;
        ib += n;
        na += n as u64;
        nb += n as u64;
    }
    println!("{na} {nb} {equal} {differ} {same_shape} {loads} {first}");
    Ok(())
}
