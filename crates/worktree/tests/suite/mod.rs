mod apply;
mod create;
mod remove;
mod support;
mod update;
