use clap::Parser;

fn main() {
    let cli = tg_enrich::cli::Cli::parse();
    tg_shared::stage::exit_with("tg-enrich", tg_enrich::run(&cli));
}
