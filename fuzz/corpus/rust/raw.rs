fn r#match() {}
fn r#type() -> r#Self {}
const S: &str = r##"a "# b"##;
struct r#S;
impl r#S { fn r#fn(&self) {} }
