mod buffers;
mod harness;
mod mcp;
mod methods;
mod permissions;
mod sessions;
mod wire;
