//! The ACP crate's modules import each other without cycles ([`cairn_testkit::layering`]).

#[test]
fn acp_modules_import_each_other_without_cycles() {
    cairn_testkit::layering::assert_layered(
        "acp",
        &cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR")).join("src"),
    );
}
