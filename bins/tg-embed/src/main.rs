use clap::Parser;

fn main() {
    let cli = tg_embed::cli::Cli::parse();
    tg_shared::stage::exit_with("tg-embed", tg_embed::run(&cli));
}
