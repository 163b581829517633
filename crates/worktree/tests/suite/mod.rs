mod apply;
mod create;
mod remove;
mod support;
