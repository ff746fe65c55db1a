use clap::Parser;

fn main() {
    let cli = tg_query::cli::Cli::parse();
    tg_shared::stage::exit_with("tg-query", tg_query::run(&cli));
}
