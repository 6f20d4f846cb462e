//! The records of the spatial stream that are neither samples nor positions and change what
//! the reader keeps: the reuse samplers' (header bit 17, `cs_sample.c`) and the header of a
//! program the recorded process exec'd (followed with `--trace-children`).

use std::io::Read;

use super::{SpatialReader, TAG_REUSE};
use crate::access::ThreadId;
use crate::batch::Batch;
use crate::error::Result;

impl<R: Read + Send> SpatialReader<R> {
    /// A reuse or count record, its first word `w`: the whole stream's sampler's (argument 0),
    /// kept when asked for (a stream read again skips them), or a thread's (argument: the
    /// thread), kept for whoever asks.
    pub(super) fn reuse_record(&mut self, w: u64) -> Result<()> {
        // A measured reuse is the whole stream's sampler's (`CS_REUSE_MEASURED`).
        let measured = super::super::tool_sampled::measured(w);
        let thread = if measured.is_some() {
            0
        } else {
            (w & super::ARG_MASK) as ThreadId
        };
        let reuse = w >> 60 == TAG_REUSE;
        if thread != 0 {
            if reuse {
                let [j, i] = self.words.array("a thread's reuse record")?;
                if let Some(t) = &mut self.threads {
                    t.push(thread, j, i);
                }
            } else {
                let [n] = self.words.array("a thread's count record")?;
                if let Some(t) = &mut self.threads {
                    t.count(thread, n);
                }
            }
        } else if reuse {
            let [j, i] = self.words.array("a reuse record")?;
            if let Some((options, stream)) = &mut self.reuse {
                stream.push_reuse(options, (j, i), measured);
            }
        } else {
            let [n] = self.words.array("a count record")?;
            if let Some((_, stream)) = &mut self.reuse {
                stream.count = n;
            }
        }
        Ok(())
    }

    /// The header `w` of the program the recorded process exec'd, followed: it counts from 0,
    /// its threads from 1, and its reuse samplers' draws were made for the old count, so they
    /// are dropped (`reuse_dropped`).
    pub(super) fn exec_followed(&mut self, w: u64, out: &mut Batch) -> Result<()> {
        self.header(w)?;
        self.exec_seen = false;
        self.span(out);
        for (b, c) in self.base.iter_mut().zip(self.counts) {
            *b += c;
        }
        self.counts = [0; 4];
        self.spanned = [0; 4];
        self.threads = None;
        self.reuse_dropped |= self.reuse.take().is_some();
        self.words.restart();
        Ok(())
    }
}
