//! The former integration-test files, one module each.

mod agents;
mod approval_matrix;
mod attachments;
mod compaction;
mod host;
mod llm_faults;
mod oversized_results;
mod rewind;
mod spending;
mod subagent;
mod token_count;
mod turn_loop;
mod usage;
