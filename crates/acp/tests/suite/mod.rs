mod buffers;
mod harness;
mod methods;
mod permissions;
mod sessions;
mod wire;
