//! [`SpatialReader`] as an [`AccessReader`]: a batch at a time, the limit published after each.

use std::io::Read;

use super::SpatialReader;
use crate::batch::Batch;
use crate::error::{Result, truncated};
use crate::sampling::Profile;
use crate::spatial::SpatialOptions;
use crate::trace::{AccessReader, Diagnostics};

impl<R: Read + Send> AccessReader for SpatialReader<R> {
    fn read_batch(&mut self, out: &mut Batch) -> Result<usize> {
        crate::interrupt::check()?;
        self.start()?;
        out.start_sampled(self.filter.hash(), self.filter.limit());
        if let Some(s) = self.pending.take() {
            self.keep(s, out);
        }
        while !self.ended {
            let Some(w) = self.words.next()? else {
                if self.exec_seen {
                    // The program became another, not followed: complete up to the exec.
                    self.ended = true;
                    self.finish(out.len())?;
                    break;
                }
                return Err(truncated(
                    self.source(),
                    "the sampled stream ended without its end record (Valgrind was killed or \
                     failed); no results of a partial run are made",
                ));
            };
            if self.record(w, out)? {
                break;
            }
        }
        self.span(out);
        self.kept += out.len() as u64;
        if let Some(publish) = &self.publish {
            publish(self.filter.limit().0);
        }
        Ok(out.len())
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = Diagnostics::default();
        if self.exec_seen && self.ended {
            d.notes.push(crate::record::tool::EXEC_NOT_FOLLOWED.into());
        }
        if self.reuse_dropped {
            d.notes.push(
                "StatCache's and StatStack's reuse samples stop at the exec the run followed \
                 (the new program counts its references from 0): their curves are left out and \
                 the LRU curve is SHARDS's (record the program with `cachescope record \
                 --trace-children` and give the trace to `--sampled` for them)"
                    .into(),
            );
        }
        d
    }

    fn reuse_profile(&mut self) -> Option<Profile> {
        self.profile.take()
    }

    fn thread_reuses(&mut self) -> Option<crate::sampling::ThreadReuses> {
        // Only a whole stream's: an exec followed, or a stream cut, gives none.
        self.threads.take().filter(|t| self.ended && !t.is_empty())
    }

    fn pass_promoted(
        &mut self,
    ) -> Option<std::sync::Arc<std::sync::Mutex<crate::spatial::promoted::Promoted>>> {
        if self.kept > 0 || self.start().is_err() {
            return None;
        }
        self.promotions.pass()
    }

    fn sample_itself(&mut self, options: &SpatialOptions) -> bool {
        // Only before the first batch: the batches so far passed on what it did not keep.
        if *options == self.options && self.kept == 0 && self.pending.is_none() {
            self.last = true;
        }
        self.last
    }
}
