//! Every tool answer fits a budget of tokens (4 characters each, as the context pack counts):
//! the longest lists are cut from their tail, least relevant first since every list is ordered
//! best first, and the answer says what was cut.

use serde::Serialize;
use serde_json::Value;

/// Characters per token of the approximation.
pub const CHARS_PER_TOKEN: usize = 4;
/// A budget fitting an agent's context beside its other work.
pub const DEFAULT_TOKENS: usize = 4000;
/// The smallest budget accepted: below it not even the envelope fits.
pub const MIN_TOKENS: usize = 200;

/// What the answer spent and what it left out.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct Spent {
    /// The budget asked for, in tokens.
    pub budget_tokens: usize,
    /// The answer's size, in tokens (characters / 4).
    pub tokens: usize,
    /// Lists cut to fit: where, how many items are shown of how many.
    pub cut: Vec<Cut>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Cut {
    /// JSON pointer to the list (`/results`, `/findings`, `/source`).
    pub path: String,
    pub shown: usize,
    pub total: usize,
}

/// Cuts lists in `value` until its JSON is at most `tokens` tokens; what was cut. Lists under
/// `/freshness`, `/budget` and `/notes` are the envelope's and are never cut.
pub fn fit(value: &mut Value, tokens: usize) -> Vec<Cut> {
    let limit = tokens.saturating_mul(CHARS_PER_TOKEN);
    let mut cuts: Vec<Cut> = Vec::new();
    loop {
        let size = value.to_string().len();
        if size <= limit {
            break;
        }
        // A list keeps its first item while another list can give; then that goes too.
        let Some((path, _, keep)) = largest_list(value, String::new(), 2, None)
            .map(|(p, n)| (p, n, 1))
            .or_else(|| largest_list(value, String::new(), 1, None).map(|(p, n)| (p, n, 0)))
        else {
            break;
        };
        // The longest list outside this one (and outside what holds it).
        let second = largest_list(value, String::new(), 2, Some(&path)).map_or(0, |(_, n)| n);
        let Some(Value::Array(items)) = value.pointer_mut(&path) else {
            break;
        };
        let total = items.len();
        // Drop from the tail until the overshoot is covered (each item's text, plus its comma),
        // but not below the next longest list: the cut is shared among the long lists.
        let list_size = Value::Array(items.clone()).to_string().len();
        let floor = list_size.saturating_sub(size - limit).max(second);
        let mut left = list_size;
        while left > floor && items.len() > keep {
            let Some(last) = items.pop() else { break };
            left = left.saturating_sub(last.to_string().len() + 1);
        }
        // Lists of the same size: one item each round, so the cut always progresses.
        if items.len() == total && items.len() > keep {
            items.pop();
        }
        let shown = items.len();
        match cuts.iter_mut().find(|c| c.path == path) {
            Some(cut) => cut.shown = shown,
            None => cuts.push(Cut { path, shown, total }),
        }
    }
    cuts
}

/// The list of at least `min_items` holding the most text, as a JSON pointer, outside the
/// envelope; not `besides`, nor a list that holds it or is held by it.
fn largest_list(
    value: &Value,
    at: String,
    min_items: usize,
    besides: Option<&str>,
) -> Option<(String, usize)> {
    let mut best: Option<(String, usize)> = None;
    let mut consider = |candidate: Option<(String, usize)>| {
        if let Some(c) = candidate {
            if best.as_ref().is_none_or(|b| c.1 > b.1) {
                best = Some(c);
            }
        }
    };
    match value {
        Value::Array(items) => {
            let related = besides.is_some_and(|b| {
                b == at || b.starts_with(&format!("{at}/")) || at.starts_with(&format!("{b}/"))
            });
            if items.len() >= min_items && !related {
                consider(Some((at.clone(), value.to_string().len())));
            }
            for (i, item) in items.iter().enumerate() {
                consider(largest_list(item, format!("{at}/{i}"), min_items, besides));
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                if at.is_empty() && matches!(key.as_str(), "freshness" | "budget" | "notes") {
                    continue;
                }
                let key = key.replace('~', "~0").replace('/', "~1");
                consider(largest_list(
                    item,
                    format!("{at}/{key}"),
                    min_items,
                    besides,
                ));
            }
        }
        _ => {}
    }
    best
}

/// The budget asked for, at least [`MIN_TOKENS`], else the default.
pub fn tokens(asked: Option<usize>) -> usize {
    asked.unwrap_or(DEFAULT_TOKENS).max(MIN_TOKENS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_long_list_is_cut_from_its_tail_and_the_cut_is_reported() {
        let mut value = json!({
            "results": (0..100).map(|i| json!({"id": format!("symbol_{i:03}"), "n": i})).collect::<Vec<_>>(),
            "freshness": {"fresh": true, "changes": ["a", "b"]},
        });
        let cuts = fit(&mut value, 200);
        assert!(
            value.to_string().len() <= 800,
            "{}",
            value.to_string().len()
        );
        let shown = value["results"].as_array().map_or(0, Vec::len);
        assert!(shown > 10 && shown < 100, "{shown}");
        assert_eq!(value["results"][0]["id"], "symbol_000");
        assert_eq!(value["freshness"]["changes"], json!(["a", "b"]));
        assert_eq!(cuts.len(), 1);
        assert_eq!(cuts[0].path, "/results");
        assert_eq!((cuts[0].shown, cuts[0].total), (shown, 100));
    }

    #[test]
    fn two_long_lists_share_the_cut() {
        let item = |i: usize| json!({"id": format!("symbol_{i:04}")});
        let mut value = json!({
            "changed": (0..200).map(item).collect::<Vec<_>>(),
            "tests": (0..40).map(item).collect::<Vec<_>>(),
        });
        let cuts = fit(&mut value, 300);
        assert!(value.to_string().len() <= 1200);
        let changed = value["changed"].as_array().map_or(0, Vec::len);
        let tests = value["tests"].as_array().map_or(0, Vec::len);
        // Neither list is emptied to spare the other.
        assert!(changed >= 10 && tests >= 10, "{changed} and {tests}");
        assert_eq!(cuts.len(), 2);
    }

    #[test]
    fn an_answer_within_the_budget_is_untouched() {
        let mut value = json!({"results": [1, 2, 3]});
        assert!(fit(&mut value, 200).is_empty());
        assert_eq!(value, json!({"results": [1, 2, 3]}));
    }

    #[test]
    fn nested_lists_are_cut_where_the_text_is() {
        let long = "x".repeat(100);
        let mut value = json!({"results": [{"id": "a", "flow": vec![long.clone(); 40]}, {"id": "b", "flow": [long]}]});
        let cuts = fit(&mut value, 300);
        // The least relevant hit goes first, then the first hit's own list is cut.
        assert_eq!(value["results"].as_array().map(Vec::len), Some(1));
        assert_eq!(value["results"][0]["id"], "a");
        assert_eq!(cuts[0].path, "/results");
        assert_eq!(cuts[1].path, "/results/0/flow");
        assert!(value.to_string().len() <= 1200);
    }
}
