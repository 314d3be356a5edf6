//! Writing into ssdlab's schema: values in its unit strings, keys by their dotted path, and
//! whether the schema has a key at all.

use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use crate::config::{Config, FlowConfig};

pub(super) fn duration_ns(ns: u64) -> String {
    match ns {
        0 => "0ns".into(),
        _ if ns.is_multiple_of(1_000_000_000) => format!("{}s", ns / 1_000_000_000),
        _ if ns.is_multiple_of(1_000_000) => format!("{}ms", ns / 1_000_000),
        _ if ns.is_multiple_of(1_000) => format!("{}us", ns / 1_000),
        _ => format!("{ns}ns"),
    }
}

pub(super) fn size_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    match bytes {
        0 => "0B".into(),
        _ if bytes.is_multiple_of(KIB * KIB * KIB) => format!("{}GiB", bytes / (KIB * KIB * KIB)),
        _ if bytes.is_multiple_of(KIB * KIB) => format!("{}MiB", bytes / (KIB * KIB)),
        _ if bytes.is_multiple_of(KIB) => format!("{}KiB", bytes / KIB),
        _ => format!("{bytes}B"),
    }
}

/// A number as short as it can be written exactly (`1`, `0.5`, `8.333333333333334`).
pub(super) fn number(x: f64) -> String {
    format!("{x}")
}

/// A fraction from a percentage, rounded to 12 digits so that 7 % reads 0.07, not 0.07000000000000001.
pub(super) fn fraction(percent: f64) -> f64 {
    (percent / 100.0 * 1e12).round() / 1e12
}

pub(super) fn set(config: &mut Map<String, Value>, path: &str, value: impl Into<Value>) {
    let mut node = config;
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            node.insert(part.to_string(), value.into());
            return;
        }
        let child = node.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()));
        node = child.as_object_mut().expect("configuration sections are tables");
    }
}

/// Whether ssdlab's schema has `section.key` (`flows` for the keys of a flow), read from the
/// schema itself: features that another change adds are mapped as soon as they exist, and warned
/// about until then.
pub(super) fn schema_has(section: &str, key: &str) -> bool {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    let schema = SCHEMA.get_or_init(|| {
        // Every section has defaults, so an empty document gives the whole schema.
        let mut schema = serde_json::from_str::<Config>("{}")
            .ok()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or_else(|| json!({}));
        if let (Some(map), Ok(flow)) = (schema.as_object_mut(), serde_json::to_value(FlowConfig::default())) {
            map.insert("flows".into(), flow);
        }
        schema
    });
    schema.get(section).is_some_and(|s| s.get(key).is_some())
}
