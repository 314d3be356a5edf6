//! Configuration values that carry a unit. Each is written as a string ("75us", "8KiB",
//! "333MT/s", "1GB/s") and parsed strictly while the configuration is read, so a bad value is
//! reported with its field path before anything is allocated.

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

use crate::time;

macro_rules! unit_type {
    ($(#[$doc:meta])* $name:ident, $value:ty, $parse:path, $expect:literal, $format:literal, $units:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            /// The parsed value in base units.
            pub value: $value,
            /// The text the user wrote, kept so the configuration echo shows it unchanged.
            pub text: String,
        }

        impl $name {
            pub fn parse(text: &str) -> Result<Self, String> {
                Ok(Self { value: $parse(text)?, text: text.to_string() })
            }
        }

        /// In the JSON schema (and the configuration reference generated from it) a string whose
        /// `format` names the kind of quantity and whose description lists the units accepted.
        impl schemars::JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "format": $format,
                    "description": concat!("expected ", $expect, "; units: ", $units),
                })
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.text)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    // serde writes "invalid type: ..., expected {this}": no "expected" of our own.
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::parse(v).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got the bare number {v} (add a unit)", $expect)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got the bare number {v} (add a unit)", $expect)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("expected {}, got the bare number {v} (add a unit)", $expect)))
                    }
                }
                deserializer.deserialize_any(V)
            }
        }
    };
}

unit_type!(
    /// A duration, stored in picoseconds.
    Duration, u64, time::parse_duration_ps, "a duration string like \"75us\"", "duration", "ps, ns, us, ms, s"
);
unit_type!(
    /// A size, stored in bytes.
    Size, u64, time::parse_size_bytes, "a size string like \"8KiB\"", "size",
    "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, sectors (512 B)"
);
unit_type!(
    /// A bus transfer rate, stored in transfers per second.
    TransferRate, f64, time::parse_transfer_rate, "a transfer rate string like \"333MT/s\"", "transfer-rate",
    "T/s, MT/s, GT/s"
);
unit_type!(
    /// A bandwidth, stored in bytes per second.
    Bandwidth, f64, time::parse_bandwidth, "a bandwidth string like \"1GB/s\"", "bandwidth",
    "a size unit per second: B/s, KB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s"
);
unit_type!(
    /// An event rate, stored in events per second.
    Rate, f64, time::parse_rate_per_second, "a rate string like \"10000/s\"", "rate", "/s, k/s, M/s"
);

unit_type!(
    /// A clock frequency, stored in hertz.
    Frequency, f64, time::parse_frequency, "a frequency string like \"500MHz\"", "frequency",
    "Hz, kHz, MHz, GHz"
);

impl Duration {
    /// Convenience constructor for defaults written in code.
    pub fn lit(text: &str) -> Self {
        Self::parse(text).expect("literal duration in code is valid")
    }
}

impl Size {
    pub fn lit(text: &str) -> Self {
        Self::parse(text).expect("literal size in code is valid")
    }
}

impl TransferRate {
    pub fn lit(text: &str) -> Self {
        Self::parse(text).expect("literal rate in code is valid")
    }
}

impl Bandwidth {
    pub fn lit(text: &str) -> Self {
        Self::parse(text).expect("literal bandwidth in code is valid")
    }
}

impl Frequency {
    pub fn lit(text: &str) -> Self {
        Self::parse(text).expect("literal frequency in code is valid")
    }
}
