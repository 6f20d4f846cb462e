//! The parts of a shared line: the data structures it holds (a line may hold several: two
//! threads' counters and a mutex beside them), each with the threads that use it and its own
//! kind of sharing, and within each the byte ranges each set of threads uses, named as fields
//! or elements where the debug information allows; and the advice for each kind.

use crate::access::ThreadId;

use super::SharedLine;
use super::line::ranges;

/// One data structure of a shared line. Field names are a public contract (`sharing --json`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Part {
    /// The structure (the attribution's stat bucket: variable, heap allocation site, stack,
    /// other).
    pub structure: String,
    /// Its bytes in the line (`0-15`).
    pub bytes: String,
    /// `true` (a thread writes bytes of it another thread uses), `false` (several threads use
    /// disjoint bytes of it), `private` (one thread uses it: a line-mate of the others'
    /// data) or `read-only` (nobody writes it).
    pub kind: String,
    /// The threads that use it.
    pub threads: Vec<ThreadId>,
    /// Its byte ranges by the threads that use them, named where the debug information says
    /// what they are (`counters.a`, `slots[1]`, `+16-23` in a heap block).
    pub fields: Vec<Field>,
}

/// A byte range of a part and the threads that use it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Field {
    /// Its name: a field or an element of a variable, an offset in a heap block, or the bytes.
    pub name: String,
    /// Its bytes in the line.
    pub bytes: String,
    /// The threads that read or write it.
    pub threads: Vec<ThreadId>,
    /// Those that write it.
    pub writers: Vec<ThreadId>,
}

/// What names a line's bytes: the structure holding a byte of it, and a name for a byte range
/// within one structure.
pub trait Namer {
    /// The structure holding byte `offset` of the line at `line`.
    fn structure(&mut self, line: u64, offset: u64) -> String;
    /// A name for bytes `[from, to)` of the line, within one structure (`None`: no better
    /// name than the bytes).
    fn field(&mut self, line: u64, from: u64, to: u64) -> Option<String>;
}

/// `line`'s parts, named by `namer`; `granule` bytes per mask bit.
pub(super) fn parts(line: &SharedLine, granule: u64, namer: &mut impl Namer) -> Vec<Part> {
    let used: u64 = line
        .threads
        .iter()
        .fold(0, |m, t| m | t.read_mask() | t.write_mask());
    // The line's granules grouped by structure, over the granules some thread uses.
    let mut groups: Vec<(String, u64)> = Vec::new();
    for g in 0..64u64 {
        if used >> g & 1 == 0 {
            continue;
        }
        let name = namer.structure(line.addr, g * granule);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, mask)) => *mask |= 1 << g,
            None => groups.push((name, 1 << g)),
        }
    }
    groups
        .into_iter()
        .map(|(structure, mask)| part(line, granule, structure, mask, namer))
        .collect()
}

fn part(
    line: &SharedLine,
    granule: u64,
    structure: String,
    mask: u64,
    namer: &mut impl Namer,
) -> Part {
    let users: Vec<_> = line
        .threads
        .iter()
        .filter(|t| (t.read_mask() | t.write_mask()) & mask != 0)
        .collect();
    // As for the line (`LineUse::deciding`): a thread with under 1 in 100 of the line's
    // accesses (the main thread reading the workers' results once) does not decide the kind.
    let total: u64 = line.threads.iter().map(|t| t.reads + t.writes).sum();
    let major: Vec<_> = users
        .iter()
        .filter(|t| (t.reads + t.writes) * 100 >= total)
        .collect();
    let deciding: Vec<_> = if major.len() >= 2 {
        major
    } else {
        users.iter().collect()
    };
    let overlap = deciding.iter().enumerate().any(|(i, a)| {
        deciding
            .iter()
            .enumerate()
            .any(|(j, b)| i != j && a.write_mask() & mask & (b.read_mask() | b.write_mask()) != 0)
    });
    let written = users.iter().any(|t| t.write_mask() & mask != 0);
    let kind = match users.len() {
        _ if !written => "read-only",
        0 | 1 => "private",
        _ if overlap => "true",
        _ => "false",
    };
    // Runs of granules used by one set of threads.
    let mut fields: Vec<Field> = Vec::new();
    let mut g = 0u64;
    while g < 64 {
        if mask >> g & 1 == 0 {
            g += 1;
            continue;
        }
        let who = |g: u64| -> Vec<ThreadId> {
            users
                .iter()
                .filter(|t| (t.read_mask() | t.write_mask()) >> g & 1 == 1)
                .map(|t| t.thread)
                .collect()
        };
        let set = who(g);
        let start = g;
        while g < 64 && mask >> g & 1 == 1 && who(g) == set {
            g += 1;
        }
        let bits = ((1u128 << g) - (1u128 << start)) as u64;
        let bytes = ranges(bits, granule);
        let name = namer
            .field(line.addr, start * granule, g * granule)
            .unwrap_or_else(|| format!("bytes {bytes}"));
        let writers = users
            .iter()
            .filter(|t| t.write_mask() & bits != 0)
            .map(|t| t.thread)
            .collect();
        fields.push(Field {
            name,
            bytes,
            threads: set,
            writers,
        });
    }
    Part {
        structure,
        bytes: ranges(mask, granule),
        kind: kind.into(),
        threads: users.iter().map(|t| t.thread).collect(),
        fields,
    }
}

/// The advice for a line whose data passes between the threads (true sharing).
pub(super) fn true_sharing_fix(line: &SharedLine) -> String {
    let writers: Vec<String> = line
        .threads
        .iter()
        .filter(|t| t.writes > 0)
        .map(|t| t.thread.to_string())
        .collect();
    format!(
        "thread{} {} write{} data other threads use, so the line moves between their caches \
         at every change: have each thread accumulate into its own copy (a local variable, or \
         a per-thread slot on its own {}-byte line) and combine the copies once, or write less \
         often (batch the updates)",
        if writers.len() == 1 { "" } else { "s" },
        writers.join(", "),
        if writers.len() == 1 { "s" } else { "" },
        line.line_size
    )
}

/// The advice for a line whose fields are each written by one thread beside other threads'
/// fields (false sharing, within a structure or between structures), naming them, and what
/// is left for the fields several threads write (true sharing). `None` when no field is one
/// thread's.
pub(super) fn layout_fix(line: &SharedLine) -> Option<String> {
    let fields: Vec<&Field> = line.structures.iter().flat_map(|p| &p.fields).collect();
    // A field only a minor thread writes (under 1 in 100 of the line's accesses: a flag set
    // once at exit) is not worth a line of its own.
    let total: u64 = line.threads.iter().map(|t| t.reads + t.writes).sum();
    let major = |t: ThreadId| {
        line.threads
            .iter()
            .any(|u| u.thread == t && (u.reads + u.writes) * 100 >= total)
    };
    let owned: Vec<&&Field> = fields
        .iter()
        .filter(|f| f.writers.len() == 1 && major(f.writers[0]))
        .collect();
    let shared: Vec<&&Field> = fields.iter().filter(|f| f.writers.len() > 1).collect();
    let mut owners: Vec<ThreadId> = owned.iter().map(|f| f.writers[0]).collect();
    owners.sort_unstable();
    owners.dedup();
    if owned.is_empty() || (owners.len() < 2 && shared.is_empty()) {
        return None;
    }
    let list = |fs: &[&&Field], who: &dyn Fn(&Field) -> String| -> String {
        let names: Vec<String> = fs
            .iter()
            .map(|f| format!("{} ({})", f.name, who(f)))
            .collect();
        match names.as_slice() {
            [one] => one.clone(),
            [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
            [] => String::new(),
        }
    };
    let threads = |ts: &[ThreadId]| -> String {
        let ids: Vec<String> = ts.iter().map(ThreadId::to_string).collect();
        format!(
            "thread{} {}",
            if ts.len() == 1 { "" } else { "s" },
            ids.join(", ")
        )
    };
    let mut text = format!(
        "{} {} written by one thread",
        list(&owned, &|f| threads(&f.writers)),
        if owned.len() == 1 { "is" } else { "are each" },
    );
    if !shared.is_empty() {
        text += &format!(
            ", beside {}",
            list(&shared, &|f| format!("written by {}", threads(&f.writers)))
        );
    }
    text += &format!(
        ": give each one thread's field a {}-byte line of its own (align it, or pad between \
         them), so that its writes stop taking the line from the other threads",
        line.line_size
    );
    if !shared.is_empty() {
        text += "; what several threads write is true sharing, which only passing less data \
                 removes: accumulate per thread and combine once, or write less often";
    }
    Some(text)
}
