//! [`Relaid`]: a trace read through [`Relayout`], as a source like any other (every analysis,
//! simulator and multi-core model reads it unchanged).

use super::relayout::{Applied, Relayout};
use crate::batch::Batch;
use crate::error::Result;
use crate::trace::{AccessReader, Diagnostics};

/// Reads `inner` and applies the changes to each batch; what they did is shared with
/// whoever holds [`Relaid::applied`]'s handle, and read when the pass is over.
pub struct Relaid<'e> {
    inner: Box<dyn AccessReader + 'e>,
    relayout: Option<Relayout<'e>>,
    done: Outcome,
}

/// What the changes did, once the trace has been read to its end (an error instead ends the
/// pass).
pub type Outcome = std::sync::Arc<std::sync::Mutex<Option<Vec<Applied>>>>;

impl<'e> Relaid<'e> {
    /// `inner`'s records as `relayout` changes them.
    pub fn new(inner: Box<dyn AccessReader + 'e>, relayout: Relayout<'e>) -> Relaid<'e> {
        Relaid {
            inner,
            relayout: Some(relayout),
            done: Outcome::default(),
        }
    }

    /// Where the changes' outcome appears at the end of the trace.
    pub fn outcome(&self) -> Outcome {
        self.done.clone()
    }
}

impl AccessReader for Relaid<'_> {
    fn read_batch(&mut self, batch: &mut Batch) -> Result<usize> {
        loop {
            let n = self.inner.read_batch(batch)?;
            let Some(r) = &mut self.relayout else {
                return Ok(n);
            };
            if n == 0 {
                let r = self.relayout.take().expect("present");
                *self.done.lock().expect("not poisoned") = Some(r.finish()?);
                return Ok(0);
            }
            r.apply(batch)?;
            if !batch.is_empty() {
                return Ok(batch.len());
            }
        }
    }

    fn diagnostics(&self) -> Diagnostics {
        self.inner.diagnostics()
    }
}
