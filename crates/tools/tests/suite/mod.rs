//! The former integration-test files, one module each.

mod agent_turn;
mod attack_corpus;
mod boundary;
mod command;
mod contract;
mod files;
mod git;
mod grep;
mod guard_watch;
mod image;
mod interact;
mod media;
mod patch;
mod read_image;
mod shell;
mod terminal;
mod web;
mod web_local;
