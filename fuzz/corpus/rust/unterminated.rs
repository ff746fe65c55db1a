fn f() {
    let s = "never closed;
}
fn g() {}
