//! Serde shapes for typed, borrowed parsing of streamed chunks. They accept exactly the
//! JSON that `serde_json::Value` indexing would read the same way (an object where an object
//! is indexed, the first element of an array), so a parser can try a typed fast path and
//! fall back to its `Value` path whenever the fast one does not apply.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// `T` read from a JSON object only (a derived struct alone would also accept an array).
#[derive(Debug)]
pub(crate) struct Obj<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Obj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Obj<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Obj)
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// A JSON string, borrowed from the input when it has no escapes (serde's own `Cow`
/// always copies when wrapped in an `Option`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Str<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str<'de>, E> {
                Ok(Str(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

impl Str<'_> {
    /// The text.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// The first element of a JSON array (the others skipped); `None` for an empty array.
#[derive(Debug)]
pub(crate) struct First<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<First<T>, A::Error> {
                let first = seq.next_element::<T>()?;
                if first.is_some() {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                }
                Ok(First(first))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    struct S<'a> {
        #[serde(borrow)]
        a: Option<Str<'a>>,
    }

    #[test]
    fn obj_takes_objects_only_and_borrows_plain_strings() {
        let s: Obj<S<'_>> = serde_json::from_str(r#"{"a":"x","b":[1,{"c":2}]}"#).unwrap();
        assert!(matches!(s.0.a, Some(Str(Cow::Borrowed("x")))));
        let s: Obj<S<'_>> = serde_json::from_str(r#"{"a":"\u00e9\n"}"#).unwrap();
        assert!(matches!(s.0.a, Some(Str(Cow::Owned(ref t))) if t == "é\n"));
        assert!(
            serde_json::from_str::<Obj<S<'_>>>(r#"{"a":1}"#).is_err(),
            "not a string"
        );
        assert!(
            serde_json::from_str::<Obj<S<'_>>>(r#"["x"]"#).is_err(),
            "arrays refused"
        );
        assert!(
            serde_json::from_str::<S<'_>>(r#"["x"]"#).is_ok(),
            "unlike a bare struct"
        );
        assert!(serde_json::from_str::<Obj<S<'_>>>(r#"{"a":"x","a":"y"}"#).is_err());
    }

    #[test]
    fn first_keeps_the_first_element_and_skips_the_rest() {
        let f: First<Obj<S<'_>>> = serde_json::from_str(r#"[{"a":"1"},{"a":2},null]"#).unwrap();
        assert_eq!(f.0.unwrap().0.a.unwrap().as_str(), "1");
        let f: First<Obj<S<'_>>> = serde_json::from_str("[]").unwrap();
        assert!(f.0.is_none());
        assert!(serde_json::from_str::<First<Obj<S<'_>>>>("[null]").is_err());
        assert!(serde_json::from_str::<First<Obj<S<'_>>>>(r#"{"a":"1"}"#).is_err());
    }
}
