use clap::Parser;

fn main() {
    let cli = tg_status::cli::Cli::parse();
    let code = match tg_status::run(&cli) {
        Ok(()) => tg_shared::exit::OK,
        Err(failure) => {
            failure.report("tg-status");
            failure.code
        }
    };
    #[allow(clippy::exit)]
    std::process::exit(code);
}
