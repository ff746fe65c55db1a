fn f() { g(); crate::a::b(); self::c(); super::d(); Self::e(); x.m(); x.m::<u8>(); Type::<T>::new(); (f)(); m!(); <T as Tr>::f(); }
