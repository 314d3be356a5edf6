//! `run.request_records`: which requests the per-request records file keeps (the writer is
//! `crate::stats::records`).

use serde::{Deserialize, Serialize};

/// Which requests are recorded (`run.request_records`): `"none"` (default), `"all"`, or a
/// fraction in (0, 1] of each flow's requests, chosen deterministically from the seed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum RequestRecords {
    #[default]
    None,
    All,
    Fraction(f64),
}

impl RequestRecords {
    pub fn is_none(&self) -> bool {
        *self == RequestRecords::None
    }

    /// The fraction of requests recorded.
    pub fn fraction(&self) -> f64 {
        match *self {
            RequestRecords::None => 0.0,
            RequestRecords::All => 1.0,
            RequestRecords::Fraction(f) => f,
        }
    }
}

impl Serialize for RequestRecords {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match *self {
            RequestRecords::None => serializer.serialize_str("none"),
            RequestRecords::All => serializer.serialize_str("all"),
            RequestRecords::Fraction(f) => serializer.serialize_f64(f),
        }
    }
}

impl<'de> Deserialize<'de> for RequestRecords {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        const EXPECTED: &str = "\"none\", \"all\" or a fraction in (0, 1]";
        impl serde::de::Visitor<'_> for V {
            type Value = RequestRecords;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<RequestRecords, E> {
                match v {
                    "none" => Ok(RequestRecords::None),
                    "all" => Ok(RequestRecords::All),
                    other => Err(E::custom(format!("expected {EXPECTED}, got \"{other}\""))),
                }
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<RequestRecords, E> {
                Ok(RequestRecords::Fraction(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<RequestRecords, E> {
                Ok(RequestRecords::Fraction(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<RequestRecords, E> {
                Ok(RequestRecords::Fraction(v as f64))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// In the JSON schema: the two words or a number.
impl schemars::JsonSchema for RequestRecords {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RequestRecords".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "\"none\", \"all\" or a fraction in (0, 1] of each flow's requests",
            "anyOf": [
                { "type": "string", "enum": ["none", "all"] },
                { "type": "number", "exclusiveMinimum": 0, "maximum": 1 }
            ]
        })
    }
}
