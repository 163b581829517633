//! Tests that change process-wide state (environment variables, the current directory) run
//! their body in a child process of their own test binary, so the other tests sharing that
//! binary never see the change:
//!
//! ```text
//! #[test]
//! fn sets_the_environment() {
//!     let name = child::test_name(module_path!(), "sets_the_environment");
//!     if !child::in_child(&name) {
//!         return child::rerun_alone(&name, &[("SOME_TOKEN", "value")]);
//!     }
//!     // … the body, with SOME_TOKEN set in this (child) process only.
//! }
//! ```

use std::process::Command;

/// Set in the child process to the full name of the test it runs.
const CHILD_ENV: &str = "CAIRN_TESTKIT_CHILD_TEST";

/// The name libtest knows the test `test` of module `module` (its `module_path!()`) by: the
/// module path without the test binary's own crate name, then the function name.
pub fn test_name(module: &str, test: &str) -> String {
    match module.split_once("::") {
        Some((_, inner)) => format!("{inner}::{test}"),
        None => test.to_string(),
    }
}

/// Whether this process is the child [`rerun_alone`] started to run the test `name`.
pub fn in_child(name: &str) -> bool {
    std::env::var(CHILD_ENV).is_ok_and(|v| v == name)
}

/// Runs the test `name` of the current test binary alone in a child process whose
/// environment also has `env`, waits for it, shows its output and panics unless exactly that
/// one test ran and passed there. Blocks the calling thread while the child runs.
pub fn rerun_alone(name: &str, env: &[(&str, &str)]) {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => panic!("cannot find the test binary to run {name} in a child: {e}"),
    };
    let out = Command::new(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, name)
        .envs(env.iter().copied())
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => panic!("cannot start the child process for {name}: {e}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    print!("{stdout}");
    assert!(out.status.success(), "{name} failed in its child process");
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{name} did not run in its child process (wrong test name?)"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_drop_the_binary_and_add_the_function() {
        assert_eq!(test_name("all::suite::trust", "t"), "suite::trust::t");
        assert_eq!(test_name("all", "t"), "t");
    }

    #[test]
    fn a_process_is_the_child_of_its_own_test_only() {
        assert!(!in_child("suite::x::y"));
    }

    #[test]
    fn a_child_sees_the_environment_it_was_given_and_the_parent_does_not() {
        let name = test_name(
            module_path!(),
            "a_child_sees_the_environment_it_was_given_and_the_parent_does_not",
        );
        if !in_child(&name) {
            rerun_alone(&name, &[("CAIRN_TESTKIT_CHILD_PROBE", "set")]);
            assert!(std::env::var_os("CAIRN_TESTKIT_CHILD_PROBE").is_none());
            return;
        }
        assert_eq!(
            std::env::var("CAIRN_TESTKIT_CHILD_PROBE").as_deref(),
            Ok("set")
        );
    }

    #[test]
    #[should_panic(expected = "did not run in its child process")]
    fn a_wrong_name_is_a_failure_not_a_silent_pass() {
        rerun_alone("tests::no_such_test", &[]);
    }
}
