mod auth;
mod harness;
mod openapi;
mod requests;
mod rollback;
mod runs;
mod tenants;
