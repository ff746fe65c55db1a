//! "Did you mean": the nearest of some known words to a mistyped one.

/// The candidate closest to `word` by edit distance, if it is plausibly a typo of it.
pub fn nearest<S: AsRef<str>>(word: &str, candidates: &[S]) -> Option<String> {
    candidates
        .iter()
        .map(|c| (edit_distance(word, c.as_ref()), c.as_ref()))
        .filter(|(d, c)| *d <= (c.len().max(word.len()) / 2).max(1))
        .min()
        .map(|(_, c)| c.to_string())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}
