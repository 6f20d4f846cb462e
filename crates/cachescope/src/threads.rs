//! Independent computations over a list (a model's cache sizes), spread over threads: a leaf
//! utility, so a model can use it without depending on the pass layer or `parallel`.

/// `items.iter().map(f).collect()`, computed on up to `threads` scoped threads, thread `t`
/// taking items `t`, `t + threads`, … (so that costs growing along the list, such as a
/// model's larger caches, spread evenly); the result is in `items`' order and does not
/// depend on `threads`.
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    let mut parts: Vec<std::vec::IntoIter<R>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| s.spawn(move || items.iter().skip(t).step_by(threads).map(f).collect()))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                let part: Vec<R> = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                part.into_iter()
            })
            .collect()
    });
    (0..items.len())
        .map(|i| parts[i % threads].next().expect("one result per item"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_thread_count_gives_the_sequential_map() {
        for n in [0usize, 1, 2, 7, 100] {
            let items: Vec<u64> = (0..n as u64).map(|i| i * 7919 % 101).collect();
            let want: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
            for threads in [1, 2, 3, 8, 200] {
                assert_eq!(map_in_order(&items, threads, |x| x * x + 1), want);
            }
        }
    }
}
