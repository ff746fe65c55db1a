use clap::Parser;

fn main() {
    let cli = tg_plan::cli::Cli::parse();
    tg_shared::stage::exit_with("tg-plan", tg_plan::run(&cli));
}
