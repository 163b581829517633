//! The former integration-test files, one module each.

mod hidden_nested;
mod nested_protected;
mod protected_links;
mod seccomp_tty;
