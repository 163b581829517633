//! The former integration-test files, one module each.

mod audit;
mod chat;
mod fault_matrix;
mod faults;
mod proxy;
mod responses;
mod secret_leak;
mod sse_rules;
mod thinking;
mod tool_images;
mod transient_400;
mod turns;
mod wrong_endpoint;
