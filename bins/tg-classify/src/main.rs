use clap::Parser;

fn main() {
    let cli = tg_classify::cli::Cli::parse();
    tg_shared::stage::exit_with("tg-classify", tg_classify::run(&cli));
}
