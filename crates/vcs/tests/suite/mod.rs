//! The former integration-test files, one module each.

mod checkpoints;
mod crash;
mod packing;
mod tracker;
