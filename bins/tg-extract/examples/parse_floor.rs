//! The parse-only floor for `make bench`: walk like tg-extract, read and tree-sitter-parse every
//! file on all threads, nothing else. Extraction time over this shows what resolution and
//! output cost on top of parsing.
//!
//! usage: parse_floor ROOT

#![allow(clippy::print_stdout, clippy::exit)]

// The allocator is tg-extract's (tg_shared's, linked through tg_lang), so the floor is a fair
// baseline.
use rayon::prelude::*;
use std::time::Instant;

fn main() {
    let Some(root) = std::env::args().nth(1) else {
        eprintln!("usage: parse_floor ROOT");
        std::process::exit(2);
    };
    let started = Instant::now();
    let root = std::fs::canonicalize(&root).expect("root exists");
    let options = tg_lang::walk::WalkOptions::default();
    let walked = tg_lang::walk::walk(&root, std::slice::from_ref(&root), &options);
    let nodes: u64 = walked
        .files
        .par_iter()
        .map(|file| {
            let Ok(bytes) = std::fs::read(&file.abs) else {
                return 0;
            };
            let source = String::from_utf8_lossy(&bytes);
            let grammar = tg_parse::grammar_for(file.lang).expect("every language has a grammar");
            let mut parser = tree_sitter::Parser::new();
            parser
                .set_language(&grammar.grammar(&file.rel))
                .expect("grammar loads");
            parser
                .parse(source.as_ref(), None)
                .map_or(0, |t| t.root_node().child_count() as u64)
        })
        .sum();
    println!(
        "{} files, {} top-level nodes, {:.3}s",
        walked.files.len(),
        nodes,
        started.elapsed().as_secs_f64()
    );
}
