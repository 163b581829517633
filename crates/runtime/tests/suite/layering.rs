//! The runtime's modules are layered like the engine's: the imports between the top-level
//! modules of `crates/runtime/src` form a DAG ([`cairn_testkit::layering`]).

#[test]
fn runtime_modules_import_each_other_without_cycles() {
    cairn_testkit::layering::assert_layered(
        "runtime",
        &cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR")).join("src"),
    );
}
