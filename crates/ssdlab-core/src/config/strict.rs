//! A deserializer adapter that holds the config to the shapes a person writes, and words type
//! errors in TOML's terms.
//!
//! Serde's derived `Deserialize` for a struct also accepts a sequence, read positionally: with a
//! plain deserializer `flash = [1, 2]` is a device with 1 channel and 2 chips per channel, every
//! other key at its default (issue 12, F02). And an enum given a number gets serde_json's bare
//! "expected value" (F04). [`Strict`] wraps the TOML or JSON deserializer, all the way down, so that
//! every struct (section or sub-table) accepts a table only, and every enum says which strings it
//! takes whatever the wrong value was. The wrapper is generic, so sections added later are covered
//! without a line here; `serde_path_to_error` wraps it and still names the field.
//!
//! The messages hold the placeholder [`SECTION`] where the section's TOML header belongs; the
//! config reader (`describe` in `mod.rs`) knows the field path and fills it in.

use std::fmt;

use serde::de::value::{BorrowedStrDeserializer, MapAccessDeserializer, StrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

/// Stands for " like [flash] or flash = { ... }" in messages; see `describe` in `mod.rs`.
pub(super) const SECTION: &str = "{section}";

/// The deserializer `D`, with structs restricted to tables and enums worded in the user's terms.
pub(super) struct Strict<D>(pub(super) D);

/// What the value being read must be.
#[derive(Clone, Copy)]
enum Shape {
    /// Whatever the wrapped visitor takes (its nested values are still checked).
    Any,
    /// A struct: a table only.
    Table,
    /// An enum: one of these strings (or a one-key table for a variant with data).
    Enum(&'static [&'static str]),
}

macro_rules! forward {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(Wrap::new(visitor, Shape::Any))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Strict<D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap::new(visitor, Shape::Any))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap::new(visitor, Shape::Any))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap::new(visitor, Shape::Any))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap::new(visitor, Shape::Any))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, Wrap::new(visitor, Shape::Table))
    }

    /// Read as "any" so that a number or a boolean reaches [`Wrap`], which names the strings the
    /// enum takes; serde_json's own `deserialize_enum` answers a number with "expected value".
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(Wrap::new(visitor, Shape::Enum(variants)))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor that keeps nested values strict and refuses what its [`Shape`] does not allow.
struct Wrap<V> {
    inner: V,
    shape: Shape,
}

impl<V> Wrap<V> {
    fn new(inner: V, shape: Shape) -> Self {
        Self { inner, shape }
    }

    /// "expected <what the shape takes>, got <what>", or None when the shape takes anything.
    fn refuse<E: de::Error>(&self, got: fmt::Arguments) -> Option<E> {
        match self.shape {
            Shape::Any => None,
            Shape::Table => Some(E::custom(format!("expected a table{SECTION}, got {got}"))),
            Shape::Enum(variants) => Some(E::custom(format!("expected {}, got {got}", one_of(variants)))),
        }
    }
}

/// `one of "nvme", "sata", "ufs"` (or `"x"` when there is only one). An alias that differs from
/// an earlier name only in case (`"slc"` beside `"SLC"`) is left out.
fn one_of(variants: &[&str]) -> String {
    let quoted: Vec<String> = variants
        .iter()
        .enumerate()
        .filter(|(i, v)| !variants[..*i].iter().any(|earlier| earlier.eq_ignore_ascii_case(v)))
        .map(|(_, v)| format!("\"{v}\""))
        .collect();
    match quoted.len() {
        1 => quoted[0].clone(),
        _ => format!("one of {}", quoted.join(", ")),
    }
}

macro_rules! scalar {
    ($($method:ident($ty:ty) => $got:literal),*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            match self.refuse(format_args!($got, v)) {
                Some(e) => Err(e),
                None => self.inner.$method(v),
            }
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.shape {
            Shape::Any => self.inner.expecting(f),
            Shape::Table => write!(f, "a table{SECTION}"),
            Shape::Enum(variants) => f.write_str(&one_of(variants)),
        }
    }

    scalar!(
        visit_bool(bool) => "the boolean {}",
        visit_i8(i8) => "the integer {}",
        visit_i16(i16) => "the integer {}",
        visit_i32(i32) => "the integer {}",
        visit_i64(i64) => "the integer {}",
        visit_i128(i128) => "the integer {}",
        visit_u8(u8) => "the integer {}",
        visit_u16(u16) => "the integer {}",
        visit_u32(u32) => "the integer {}",
        visit_u64(u64) => "the integer {}",
        visit_u128(u128) => "the integer {}",
        visit_f32(f32) => "the number {}",
        visit_f64(f64) => "the number {}",
        visit_char(char) => "the string {:?}"
    );

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        match self.shape {
            Shape::Enum(_) => self.inner.visit_enum(StrDeserializer::new(v)),
            Shape::Table => Err(self.refuse(format_args!("the string {v:?}")).expect("a table refuses strings")),
            Shape::Any => self.inner.visit_str(v),
        }
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        match self.shape {
            Shape::Enum(_) => self.inner.visit_enum(BorrowedStrDeserializer::new(v)),
            Shape::Table => Err(self.refuse(format_args!("the string {v:?}")).expect("a table refuses strings")),
            Shape::Any => self.inner.visit_borrowed_str(v),
        }
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        match self.shape {
            Shape::Enum(_) => self.inner.visit_enum(StringDeserializer::new(v)),
            Shape::Table => Err(self.refuse(format_args!("the string {v:?}")).expect("a table refuses strings")),
            Shape::Any => self.inner.visit_string(v),
        }
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        match self.refuse(format_args!("bytes")) {
            Some(e) => Err(e),
            None => self.inner.visit_bytes(v),
        }
    }

    fn visit_borrowed_bytes<E: de::Error>(self, v: &'de [u8]) -> Result<Self::Value, E> {
        match self.refuse(format_args!("bytes")) {
            Some(e) => Err(e),
            None => self.inner.visit_borrowed_bytes(v),
        }
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
        match self.refuse(format_args!("bytes")) {
            Some(e) => Err(e),
            None => self.inner.visit_byte_buf(v),
        }
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        match self.refuse(format_args!("null")) {
            Some(e) => Err(e),
            None => self.inner.visit_none(),
        }
    }

    fn visit_some<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<Self::Value, D2::Error> {
        self.inner.visit_some(Strict(deserializer))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        match self.refuse(format_args!("null")) {
            Some(e) => Err(e),
            None => self.inner.visit_unit(),
        }
    }

    fn visit_newtype_struct<D2: Deserializer<'de>>(self, deserializer: D2) -> Result<Self::Value, D2::Error> {
        self.inner.visit_newtype_struct(Strict(deserializer))
    }

    /// A struct given as an array is refused: serde would read it positionally. An array of
    /// tables (`[[flash]]`) gets its own hint, since it differs from `[flash]` by one bracket.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        match self.shape {
            Shape::Any => self.inner.visit_seq(StrictSeq(seq)),
            Shape::Table => {
                let tables = matches!(seq.next_element::<Kind>(), Ok(Some(Kind::Table)));
                let got = if tables {
                    "an array of tables (write the section's header with single brackets, once)"
                } else {
                    "an array"
                };
                Err(self.refuse(format_args!("{got}")).expect("a table refuses arrays"))
            }
            Shape::Enum(_) => Err(self.refuse(format_args!("an array")).expect("an enum refuses arrays")),
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        match self.shape {
            // A variant with data: `{ variant = ... }`.
            Shape::Enum(_) => self.inner.visit_enum(StrictEnum(MapAccessDeserializer::new(StrictMap(map)))),
            _ => self.inner.visit_map(StrictMap(map)),
        }
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.inner.visit_enum(StrictEnum(data))
    }
}

/// Whether the first element of an array is a table (for the `[[section]]` hint).
enum Kind {
    Table,
    Other,
}

impl<'de> de::Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct K;
        impl<'de> Visitor<'de> for K {
            type Value = Kind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
                while map.next_entry::<de::IgnoredAny, de::IgnoredAny>()?.is_some() {}
                Ok(Kind::Table)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(Kind::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
            fn visit_unit<E>(self) -> Result<Kind, E> {
                Ok(Kind::Other)
            }
        }
        deserializer.deserialize_any(K)
    }
}

/// A seed whose value is read strictly.
struct StrictSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for StrictSeed<S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Strict(deserializer))
    }
}

struct StrictSeq<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for StrictSeq<A> {
    type Error = A::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(StrictSeed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct StrictMap<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for StrictMap<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(StrictSeed(seed))
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(StrictSeed(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

struct StrictEnum<A>(A);

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for StrictEnum<A> {
    type Error = A::Error;
    type Variant = StrictVariant<A::Variant>;
    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(seed)?;
        Ok((value, StrictVariant(variant)))
    }
}

struct StrictVariant<A>(A);

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for StrictVariant<A> {
    type Error = A::Error;
    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(StrictSeed(seed))
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap::new(visitor, Shape::Any))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Wrap::new(visitor, Shape::Table))
    }
}
