mod buffers;
mod harness;
mod layering;
mod mcp;
mod methods;
mod permissions;
mod sessions;
mod wire;
