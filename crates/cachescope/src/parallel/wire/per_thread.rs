//! [`PerThreadPlan`], [`Both`] and [`CountPlan`] partials on the wire: each inner partial in its own
//! format, framed by its length (a thread's partial after its id).

use std::collections::BTreeMap;

use super::{Cursor, Out, Wire};
use crate::error::{Result, Source};
use crate::parallel::{Both, CountPlan, PerThreadPlan};

const PER_THREAD: [u8; 8] = *b"CSPTH\0\0\x01";
const BOTH: [u8; 8] = *b"CSBTH\0\0\x01";

impl<P: Wire + Clone + Send + 'static> Wire for PerThreadPlan<P> {
    fn encode(&self, part: &mut Self::Partial) -> Vec<u8> {
        let mut out = Out::default();
        out.bytes(&PER_THREAD);
        out.u64(part.len() as u64);
        for (&t, p) in part.iter_mut() {
            out.u32(t);
            let inner = self.0.encode(p);
            out.u64(inner.len() as u64);
            out.bytes(&inner);
        }
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<Self::Partial> {
        let mut r = Cursor::open(bytes, source, &PER_THREAD, "per-thread")?;
        let n = r.len(12)?;
        let mut parts = BTreeMap::new();
        for _ in 0..n {
            let t = r.u32()?;
            let len = r.len(1)?;
            let part = self.0.decode(r.take(len)?, source)?;
            if parts.insert(t, part).is_some() {
                return Err(r.corrupt(format!("thread {t} twice")));
            }
        }
        r.end()?;
        Ok(parts)
    }

    fn refs(&self, part: &Self::Partial) -> u64 {
        part.values().map(|p| self.0.refs(p)).sum()
    }
}

impl<A: Wire, B: Wire> Wire for Both<A, B> {
    fn encode(&self, part: &mut Self::Partial) -> Vec<u8> {
        let mut out = Out::default();
        out.bytes(&BOTH);
        for inner in [self.0.encode(&mut part.0), self.1.encode(&mut part.1)] {
            out.u64(inner.len() as u64);
            out.bytes(&inner);
        }
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<Self::Partial> {
        let mut r = Cursor::open(bytes, source, &BOTH, "two-plan")?;
        let len = r.len(1)?;
        let a = self.0.decode(r.take(len)?, source)?;
        let len = r.len(1)?;
        let b = self.1.decode(r.take(len)?, source)?;
        r.end()?;
        Ok((a, b))
    }

    /// The first plan's: both cover the same references.
    fn refs(&self, part: &Self::Partial) -> u64 {
        self.0.refs(&part.0)
    }
}

const COUNT: [u8; 8] = *b"CSCNT\0\0\x01";

impl Wire for CountPlan {
    fn encode(&self, part: &mut u64) -> Vec<u8> {
        let mut out = Out::default();
        out.bytes(&COUNT);
        out.u64(*part);
        out.0
    }

    fn decode(&self, bytes: &[u8], source: &Source) -> Result<u64> {
        let mut r = Cursor::open(bytes, source, &COUNT, "reference count")?;
        let n = r.u64()?;
        r.end()?;
        Ok(n)
    }

    fn refs(&self, part: &u64) -> u64 {
        *part
    }
}
