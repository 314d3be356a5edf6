//! Serde's type errors in the words of the person who wrote the config.
//!
//! Serde reports a wrong type as "invalid type: sequence, expected u32": Rust's type names and
//! its data model's words (sequence, map, floating point). A user wrote TOML, where those are a
//! list, a table and a number, and never saw a `u32`. [`plain`] rewrites the message as
//! "expected a whole number from 0 to 4294967295, got a list" (what was expected first, as the
//! other config errors say it), leaving every other message unchanged (issue 12, item 5).

/// The message with serde's Rust-side words replaced; messages in other shapes pass unchanged.
pub(super) fn plain(reason: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = reason.strip_prefix(prefix) {
            if let Some((got, expected)) = rest.split_once(", expected ") {
                return format!("expected {}, got {}", expected_words(expected), got_words(got));
            }
        }
    }
    reason.to_string()
}

/// What serde expected, in TOML's words.
fn expected_words(expected: &str) -> String {
    let whole = |max: &str| format!("a whole number from 0 to {max}");
    match expected.trim() {
        "u8" => whole("255"),
        "u16" => whole("65535"),
        "u32" => whole("4294967295"),
        "u64" | "usize" => whole("18446744073709551615"),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_string(),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a sequence" => "a list [ ... ]".to_string(),
        "a map" => "a table".to_string(),
        "a string" | "a borrowed string" => "a string in quotes".to_string(),
        "enum" => "one of the names this key takes, as a string (docs/configuration.md)".to_string(),
        other if other.starts_with("struct ") => "a table { key = value, ... }".to_string(),
        other => other.to_string(),
    }
}

/// What the user gave, in TOML's words: serde writes "integer `3`", "floating point `1.5`",
/// "string \"x\"", "boolean `true`", "sequence", "map", "unit value".
fn got_words(got: &str) -> String {
    let got = got.trim();
    let value = |s: &str| s.trim().trim_matches('`').to_string();
    if let Some(v) = got.strip_prefix("integer ") {
        return format!("the whole number {}", value(v));
    }
    if let Some(v) = got.strip_prefix("floating point ") {
        return format!("the number {}", value(v));
    }
    if let Some(v) = got.strip_prefix("boolean ") {
        return value(v);
    }
    if let Some(v) = got.strip_prefix("string ") {
        return format!("the string {}", v.trim());
    }
    match got {
        "sequence" => "a list".to_string(),
        "map" => "a table".to_string(),
        "unit value" | "unit" => "nothing".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn type_errors_speak_toml() {
        assert_eq!(
            plain("invalid type: sequence, expected u32"),
            "expected a whole number from 0 to 4294967295, got a list"
        );
        assert_eq!(
            plain("invalid type: floating point `1e300`, expected u32"),
            "expected a whole number from 0 to 4294967295, got the number 1e300"
        );
        assert_eq!(
            plain("invalid value: integer `-1`, expected u64"),
            "expected a whole number from 0 to 18446744073709551615, got the whole number -1"
        );
        assert_eq!(plain("invalid type: string \"x\", expected f64"), "expected a number, got the string \"x\"");
        assert_eq!(
            plain("invalid type: map, expected enum"),
            "expected one of the names this key takes, as a string (docs/configuration.md), got a table"
        );
        assert_eq!(
            plain("invalid type: integer `3`, expected a boolean"),
            "expected true or false, got the whole number 3"
        );
    }

    #[test]
    fn other_messages_pass_unchanged() {
        let text = "unknown variant `x`, expected one of `lru`, `fifo`, `random`";
        assert_eq!(plain(text), text);
        assert_eq!(plain("must be between 2 and 65535, got 0"), "must be between 2 and 65535, got 0");
    }
}
