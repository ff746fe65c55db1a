"""A tiny application with known dead code (see tests/query.rs)."""
