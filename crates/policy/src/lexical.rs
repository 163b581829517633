//! The one lexical path normalisation every crate uses: `.` removed and `..` folded without
//! touching the file system. Callers differ only in what a `..` that climbs above the start
//! of the path means ([`Climb`]), so each keeps its own semantics by choosing it.

use std::path::{Component, Path, PathBuf};

/// What a `..` that climbs above the start of the path (the root of an absolute path, the
/// first component of a relative one) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Climb {
    /// It stays where it is, as the kernel does at `/` (`/..` is `/`, `a/../../b` is `b`).
    Saturate,
    /// The path is refused: it leaves where it started (`None`).
    Refuse,
}

/// `path` with `.` removed and `..` folded into the component before it; `None` only with
/// [`Climb::Refuse`] when a `..` climbs above the start. Prefixes and the root are kept.
pub fn fold_dots(path: &Path, climb: Climb) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                // `pop` fails at the root and at the start of a relative path alike.
                if !out.pop() && climb == Climb::Refuse {
                    return None;
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    Some(out)
}

/// `path` normalised with [`Climb::Saturate`]: the fold that never fails.
pub fn fold_dots_saturating(path: &Path) -> PathBuf {
    // Never `None`: only `Climb::Refuse` refuses.
    fold_dots(path, Climb::Saturate).unwrap_or_default()
}

/// Whether relative `path` stays inside the folder it is taken from once folded (`a/../b`
/// does, `a/../../b` and every absolute path do not).
pub fn stays_inside(path: &Path) -> bool {
    !path.has_root() && fold_dots(path, Climb::Refuse).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(p: &str, climb: Climb) -> Option<String> {
        fold_dots(Path::new(p), climb).map(|p| p.display().to_string())
    }

    #[test]
    fn dots_fold_the_same_way_for_both_climbs_while_they_stay_inside() {
        for (input, folded) in [
            ("/a/./b/../c", "/a/c"),
            ("a/b/../../c", "c"),
            ("./a//b/", "a/b"),
            ("a/..", ""),
            ("/", "/"),
            ("", ""),
            ("/w/proj/./x/../y", "/w/proj/y"),
        ] {
            assert_eq!(
                fold(input, Climb::Saturate).as_deref(),
                Some(folded),
                "{input}"
            );
            assert_eq!(
                fold(input, Climb::Refuse).as_deref(),
                Some(folded),
                "{input}"
            );
            assert_eq!(
                fold_dots_saturating(Path::new(input)).display().to_string(),
                folded,
                "{input}"
            );
        }
    }

    #[test]
    fn climbing_above_the_start_saturates_or_is_refused() {
        for (input, saturated) in [
            ("/..", "/"),
            ("/../..", "/"),
            ("/a/../../b", "/b"),
            ("..", ""),
            ("../x", "x"),
            ("a/../../x", "x"),
            ("./..", ""),
        ] {
            assert_eq!(
                fold(input, Climb::Saturate).as_deref(),
                Some(saturated),
                "{input}"
            );
            assert_eq!(
                fold_dots_saturating(Path::new(input)).display().to_string(),
                saturated,
                "{input}"
            );
            assert_eq!(fold(input, Climb::Refuse), None, "{input}");
        }
    }

    #[test]
    fn staying_inside_is_relative_and_never_climbs_out() {
        for inside in ["a", "a/b/..", "./a/../b", "a/..", ""] {
            assert!(stays_inside(Path::new(inside)), "{inside}");
        }
        for outside in ["..", "../a", "a/../..", "/a", "/", "./../a"] {
            assert!(!stays_inside(Path::new(outside)), "{outside}");
        }
    }
}
