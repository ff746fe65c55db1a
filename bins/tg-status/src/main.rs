use clap::Parser;

fn main() {
    let cli = tg_status::cli::Cli::parse();
    tg_shared::stage::exit_with("tg-status", tg_status::run(&cli));
}
