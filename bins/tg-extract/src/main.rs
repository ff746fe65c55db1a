use clap::Parser;

// tree-sitter makes many small allocations from both threads; jemalloc made cold extraction of
// the stdlib ~13% faster than glibc's malloc in interleaved A/B runs (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    let cli = tg_extract::cli::Cli::parse();
    let code = match tg_extract::run(cli) {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("tg-extract: error: {}", failure.message);
            failure.code
        }
    };
    #[allow(clippy::exit)]
    std::process::exit(code);
}
