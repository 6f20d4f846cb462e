//! Independent computations over a list (a model's cache sizes), spread over threads.

/// `items.iter().map(f).collect()`, computed on up to `threads` scoped threads, each taking a
/// contiguous share of `items`; the result is in `items`' order and does not depend on
/// `threads`.
pub fn map_in_order<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let per = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let parts: Vec<_> = items
            .chunks(per)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        parts
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
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
