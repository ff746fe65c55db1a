pub(crate) trait T<A>: Clone where A: Copy { fn m(&self); fn d(&self) { Self::m(self) } }
impl<A: Copy> T<A> for Vec<A> { fn m(&self) {} }
impl dyn T<u8> { fn x() {} }
impl<'a> &'a mut Store { fn y() {} }
union U { a: u8 }
enum E { A(u8), B { x: u8 } }
macro_rules! m { ($x:expr) => { f($x) }; }
extern "C" { fn ext(x: i32); }
mod inner;
use self::inner::{a, b as c, d::*};
use super::super::z;
use crate::x::{self, y::{z, w}};
