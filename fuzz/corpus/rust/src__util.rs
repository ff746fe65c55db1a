/// Writes a log line.
pub fn log(message: &str) {
    eprintln!("{message}");
}
