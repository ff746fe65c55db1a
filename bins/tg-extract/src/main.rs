use clap::Parser;

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
