//! The former integration-test files, one module each.

mod nested_protected;
mod protected_links;
