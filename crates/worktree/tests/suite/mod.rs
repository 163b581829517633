mod apply;
mod create;
mod keep;
mod remove;
mod support;
mod update;
