//! The former integration-test files, one module each.

mod keyring;
