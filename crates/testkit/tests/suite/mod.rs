//! The former integration-test files, one module each.

mod mock_server;
