//! Which store instructions are non-temporal (`movnti`, `movntdq`, `movntps`, `movntpd`,
//! `movntq` and their VEX and EVEX forms), read from the program's code: Valgrind records a
//! non-temporal store as a plain store, so a trace alone cannot tell (`nontemporal:@movnt`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

/// The code of the modules seen, and each store instruction's answer.
#[derive(Debug, Default)]
pub struct Movnt {
    files: HashMap<PathBuf, Option<Code>>,
    answers: HashMap<u64, bool>,
}

/// A module's executable sections: (link-time address, bytes).
#[derive(Debug)]
struct Code(Vec<(u64, Vec<u8>)>);

impl Movnt {
    /// True when the instruction at run-time address `pc`, in the module at `path` loaded
    /// with `bias`, is a non-temporal store.
    pub fn is_movnt(&mut self, pc: u64, module: Option<(&Path, u64)>) -> bool {
        if let Some(&a) = self.answers.get(&pc) {
            return a;
        }
        let answer = module.is_some_and(|(path, bias)| {
            let code = self
                .files
                .entry(path.to_owned())
                .or_insert_with(|| Code::load(path));
            code.as_ref()
                .and_then(|c| c.bytes_at(pc.wrapping_sub(bias)))
                .is_some_and(non_temporal_store)
        });
        self.answers.insert(pc, answer);
        answer
    }
}

impl Code {
    fn load(path: &Path) -> Option<Code> {
        let data = std::fs::read(path).ok()?;
        let file = object::File::parse(&*data).ok()?;
        let sections = file
            .sections()
            .filter(|s| s.kind() == object::SectionKind::Text)
            .filter_map(|s| Some((s.address(), s.data().ok()?.to_vec())))
            .collect();
        Some(Code(sections))
    }

    /// The bytes from link-time address `at` to its section's end.
    fn bytes_at(&self, at: u64) -> Option<&[u8]> {
        self.0.iter().find_map(|(start, bytes)| {
            let i = usize::try_from(at.checked_sub(*start)?).ok()?;
            bytes.get(i..)
        })
    }
}

/// True when the x86-64 instruction at the start of `code` is a non-temporal store.
pub fn non_temporal_store(code: &[u8]) -> bool {
    let mut i = 0;
    // Legacy prefixes (operand size, repeats, segments, lock), then an optional REX.
    while i < code.len()
        && matches!(
            code[i],
            0x66 | 0xF2 | 0xF3 | 0xF0 | 0x2E | 0x3E | 0x26 | 0x36 | 0x64 | 0x65
        )
    {
        i += 1;
    }
    if i < code.len() && (0x40..=0x4F).contains(&code[i]) {
        i += 1;
    }
    let at = |k: usize| code.get(i + k).copied();
    match at(0) {
        // 0F C3 movnti, 0F 2B movntps/pd, 0F E7 movntq/dq.
        Some(0x0F) => matches!(at(1), Some(0xC3 | 0x2B | 0xE7)),
        // Two-byte VEX: C5 RvvvvLpp opcode (map 0F).
        Some(0xC5) => matches!(at(2), Some(0x2B | 0xE7)),
        // Three-byte VEX: C4 RXBmmmmm WvvvvLpp opcode; map 0F is mmmmm = 1.
        Some(0xC4) => at(1).is_some_and(|b| b & 0x1F == 1) && matches!(at(3), Some(0x2B | 0xE7)),
        // EVEX: 62 P0 P1 P2 opcode; map 0F is P0's low bits = 01.
        Some(0x62) => at(1).is_some_and(|b| b & 0x03 == 1) && matches!(at(4), Some(0x2B | 0xE7)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::non_temporal_store;

    #[test]
    fn non_temporal_stores_are_told_from_others() {
        for code in [
            &[0x48, 0x0F, 0xC3, 0x07][..],         // movnti %rax,(%rdi)
            &[0x0F, 0xC3, 0x07],                   // movnti %eax,(%rdi)
            &[0x66, 0x0F, 0xE7, 0x07],             // movntdq %xmm0,(%rdi)
            &[0x0F, 0x2B, 0x07],                   // movntps %xmm0,(%rdi)
            &[0x66, 0x0F, 0x2B, 0x07],             // movntpd %xmm0,(%rdi)
            &[0xC5, 0xF9, 0xE7, 0x07],             // vmovntdq %xmm0,(%rdi)
            &[0xC4, 0xC1, 0x7D, 0xE7, 0x07],       // vmovntdq %ymm0,(%r15)
            &[0x62, 0xF1, 0x7D, 0x48, 0xE7, 0x07], // vmovntdq %zmm0,(%rdi)
        ] {
            assert!(non_temporal_store(code), "{code:02x?}");
        }
        for code in [
            &[0x48, 0x89, 0x07][..],         // mov %rax,(%rdi)
            &[0x66, 0x0F, 0x7F, 0x07],       // movdqa %xmm0,(%rdi)
            &[0x66, 0x0F, 0x38, 0x2A, 0x07], // movntdqa (%rdi),%xmm0: a load
            &[0xF2, 0x0F, 0x11, 0x07],       // movsd %xmm0,(%rdi)
            &[],
        ] {
            assert!(!non_temporal_store(code), "{code:02x?}");
        }
    }
}
