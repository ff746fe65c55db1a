use clap::Parser;

fn main() {
    let cli = tg_plan::cli::Cli::parse();
    let code = match tg_plan::run(&cli) {
        Ok(()) => tg_shared::exit::OK,
        Err(failure) => {
            failure.report("tg-plan");
            failure.code
        }
    };
    #[allow(clippy::exit)]
    std::process::exit(code);
}
