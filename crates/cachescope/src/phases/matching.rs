//! The best one-to-one matching of two labelings: the Hungarian algorithm (Kuhn 1955, Munkres
//! 1957) in its O(n³) shortest-augmenting-path form with row and column potentials.
//!
//! PoEC (see `metrics`) matches a method's clusters to the L2 hit-rate classes so that the
//! number of intervals on which they agree is largest: on the k × k contingency table
//! `w[i][j] = #{intervals in cluster i and class j}` it finds the permutation σ maximizing
//! `Σ_i w[i][σ(i)]`.

/// The permutation `σ` (row `i` → column `σ[i]`) maximizing `Σ_i weights[i][σ[i]]` for a square
/// matrix; with its total. An empty matrix gives an empty permutation.
pub fn max_weight_matching(weights: &[Vec<i64>]) -> (Vec<usize>, i64) {
    let n = weights.len();
    debug_assert!(weights.iter().all(|r| r.len() == n));
    if n == 0 {
        return (Vec::new(), 0);
    }
    // Minimise cost = −weight. 1-based arrays as in the classic formulation: column 0 is a
    // virtual start; u, v are potentials; p[j] is the row matched to column j.
    let cost = |i: usize, j: usize| -weights[i - 1][j - 1];
    let inf = i64::MAX / 4;
    let mut u = vec![0i64; n + 1];
    let mut v = vec![0i64; n + 1];
    let mut p = vec![0usize; n + 1];
    let mut way = vec![0usize; n + 1];
    for i in 1..=n {
        p[0] = i;
        let mut j0 = 0;
        let mut minv = vec![inf; n + 1];
        let mut used = vec![false; n + 1];
        loop {
            used[j0] = true;
            let i0 = p[j0];
            let mut delta = inf;
            let mut j1 = 0;
            for j in 1..=n {
                if !used[j] {
                    let cur = cost(i0, j) - u[i0] - v[j];
                    if cur < minv[j] {
                        minv[j] = cur;
                        way[j] = j0;
                    }
                    if minv[j] < delta {
                        delta = minv[j];
                        j1 = j;
                    }
                }
            }
            for j in 0..=n {
                if used[j] {
                    u[p[j]] += delta;
                    v[j] -= delta;
                } else {
                    minv[j] -= delta;
                }
            }
            j0 = j1;
            if p[j0] == 0 {
                break;
            }
        }
        loop {
            let j1 = way[j0];
            p[j0] = p[j1];
            j0 = j1;
            if j0 == 0 {
                break;
            }
        }
    }
    let mut assignment = vec![0; n];
    for j in 1..=n {
        assignment[p[j] - 1] = j - 1;
    }
    let total = (0..n).map(|i| weights[i][assignment[i]]).sum();
    (assignment, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every permutation of 0..n, by Heap's algorithm.
    fn permutations(n: usize) -> Vec<Vec<usize>> {
        fn go(k: usize, a: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
            if k <= 1 {
                out.push(a.clone());
                return;
            }
            for i in 0..k {
                go(k - 1, a, out);
                let j = if k % 2 == 0 { i } else { 0 };
                a.swap(j, k - 1);
            }
        }
        let mut out = Vec::new();
        go(n, &mut (0..n).collect(), &mut out);
        out
    }

    #[test]
    fn hand_example() {
        // Clusters relabelled: 0 ↔ 2, 1 ↔ 1 agrees best.
        let w = vec![vec![1, 0, 9], vec![0, 5, 1], vec![8, 2, 0]];
        assert_eq!(max_weight_matching(&w), (vec![2, 1, 0], 22));
        assert_eq!(max_weight_matching(&[]), (vec![], 0));
        assert_eq!(max_weight_matching(&[vec![4]]), (vec![0], 4));
        assert_eq!(permutations(4).len(), 24);
    }

    proptest! {
        #[test]
        fn matches_brute_force(n in 1usize..7, cells in prop::collection::vec(0i64..50, 36)) {
            let w: Vec<Vec<i64>> = (0..n).map(|i| cells[i * 6..i * 6 + n].to_vec()).collect();
            let (perm, total) = max_weight_matching(&w);
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());
            let brute = permutations(n)
                .iter()
                .map(|p| (0..n).map(|i| w[i][p[i]]).sum::<i64>())
                .max()
                .unwrap();
            prop_assert_eq!(total, brute);
        }
    }
}
