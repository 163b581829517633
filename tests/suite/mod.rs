//! The former integration-test files, one module each.

mod bindings;
mod ipc;
mod packaging;
