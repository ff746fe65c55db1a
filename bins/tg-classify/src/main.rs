use clap::Parser;

fn main() {
    let cli = tg_classify::cli::Cli::parse();
    let code = match tg_classify::run(&cli) {
        Ok(()) => tg_shared::exit::OK,
        Err(failure) => {
            failure.report("tg-classify");
            failure.code
        }
    };
    #[allow(clippy::exit)]
    std::process::exit(code);
}
