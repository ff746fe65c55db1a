//! The patches between stages (`tg-extract --patch`), applied here apart from the stages that
//! write them: a test's oracle.

/// A patch applied as its record's doc says, written here apart from tg-extract's splice:
/// the removed lines dropped (each must be there), a file's added lines put where its removed
/// ones were (or in path order), edges merged in (src, kind, dst) order, the tail replaced.
pub fn apply_patch(base: &[u8], patch: &[u8]) -> Vec<u8> {
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).expect("UTF-8");
    let (base, patch) = (text(base), text(patch));
    let mut patch_lines = patch.lines();
    let mut header: serde_json::Value =
        serde_json::from_str(patch_lines.next().expect("a header")).expect("JSON");
    let ends = header
        .as_object_mut()
        .expect("object")
        .shift_remove("patch");
    let result = ends.expect("a patch header")["result"].clone();
    let mut sections: Vec<Vec<&str>> = Vec::new();
    for line in patch_lines {
        match line.starts_with("{\"type\":\"patch\",") {
            true => sections.push(Vec::new()),
            false => sections.last_mut().expect("a section first").push(line),
        }
    }
    assert_eq!(sections.len(), 3, "removed, added, tail");
    let mut removed: std::collections::HashMap<&str, usize> = Default::default();
    for line in &sections[0] {
        *removed.entry(line).or_default() += 1;
    }
    let kind_of = |line: &str| -> String {
        let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
        value["type"].as_str().expect("a type").to_string()
    };
    let mut base_lines = base.lines();
    // The base's header is the patch's but for the stream it names; the result's names the
    // patch's result.
    let mut base_header: serde_json::Value =
        serde_json::from_str(base_lines.next().expect("a header")).expect("JSON");
    let base_header = base_header.as_object_mut().expect("object");
    base_header.shift_remove("fingerprint");
    assert_eq!(serde_json::Value::Object(base_header.clone()), header);
    base_header.insert("fingerprint".to_string(), result);
    let base_header = serde_json::Value::Object(base_header.clone());
    // File blocks by path, edges, in the base's order; the removed lines taken out.
    let mut blocks: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut edges: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in base_lines {
        let kind = kind_of(line);
        if !["file", "node", "edge"].contains(&kind.as_str()) {
            break;
        }
        if kind == "file" {
            current = path_of(line);
        }
        if let Some(count) = removed.get_mut(line).filter(|count| **count > 0) {
            *count -= 1;
            continue;
        }
        match kind.as_str() {
            "edge" => edges.push(line.to_string()),
            _ => blocks
                .entry(current.clone())
                .or_default()
                .push(line.to_string()),
        }
    }
    assert!(
        removed.values().all(|&n| n == 0),
        "every removed line was in the base"
    );
    for line in &sections[1] {
        match kind_of(line).as_str() {
            "edge" => edges.push(line.to_string()),
            kind => {
                if kind == "file" {
                    current = path_of(line);
                    assert!(
                        !blocks.contains_key(&current),
                        "{current} was removed whole"
                    );
                }
                blocks
                    .entry(current.clone())
                    .or_default()
                    .push(line.to_string());
            }
        }
    }
    let key = |line: &String| {
        let edge: tg_shared::record::Edge = serde_json::from_str(line).expect("an edge");
        (edge.src, edge.kind, edge.dst)
    };
    edges.sort_by_key(key);
    let mut out = format!("{base_header}\n");
    for line in blocks.values().flatten().chain(&edges) {
        out.push_str(line);
        out.push('\n');
    }
    for line in &sections[2] {
        out.push_str(line);
        out.push('\n');
    }
    out.into_bytes()
}

/// The `path` of a `file` line.
fn path_of(line: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
    value["path"].as_str().expect("a path").to_string()
}
