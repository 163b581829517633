//! The engine's modules are layered: the imports between the top-level modules of
//! `crates/engine/src` form a DAG ([`cairn_testkit::layering`]).

use std::collections::{BTreeMap, BTreeSet};

use cairn_testkit::layering::{assert_layered, find_cycle, references};

#[test]
fn the_parser_finds_a_cycle_and_names_it() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    g.entry("d".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&g), None);
    let modules: BTreeSet<String> = ["x", "y", "z"].map(String::from).into();
    let text = "use crate::{x::A, y};\n// crate::z is only named\nfn f() { super::z::g(); let s = \"crate::z\"; crate::Foo; }";
    let (refs, root) = references(text, &["w".to_string()], &modules);
    assert_eq!(refs, ["x", "y", "z"].map(String::from).into());
    assert_eq!(root, ["Foo"]);
}

#[test]
fn engine_modules_import_each_other_without_cycles() {
    assert_layered(
        "engine",
        &cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR")).join("src"),
    );
}
