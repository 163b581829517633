//! `cairn-mcp-test-server`: the test MCP server over stdio (see `cairn_mcp::testing`).
//! Faults: `--fault hang-initialize|exit-initialize|flood-stderr|duplicate-tools|grandchild|slow-start=MS`.

use std::process::ExitCode;

use cairn_mcp::testing::{serve_stdio, Faults, TestServer};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let faults = Faults::from_args_and_env(&args);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve_stdio(TestServer::new(faults))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("test server error: {e}");
            ExitCode::FAILURE
        }
    }
}
