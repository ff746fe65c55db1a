use clap::Parser;

fn main() {
    let cli = tldrgraph::cli::Cli::parse();
    let code = tldrgraph::run(&cli);
    #[allow(clippy::exit)]
    std::process::exit(code);
}
