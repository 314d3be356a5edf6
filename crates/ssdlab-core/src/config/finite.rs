//! NaN and infinity, which TOML allows (`nan`, `inf`) and no setting means, refused with the key
//! that holds them.
//!
//! A TOML file reaches the core as JSON: Python reads it with `tomllib` and `json.dumps` writes a
//! non-finite float as the bare token `NaN`, `Infinity` or `-Infinity`, which is not JSON, so
//! serde_json used to stop with "expected value at line 1 column 81", a position in a document the
//! user never saw (issue 12, F03). The JSON text is scanned for those tokens first, keeping track
//! of the key path, so the error names the field (`ftl.over_provisioning`) and shows what a value
//! looks like there (its default). The Rust TOML reader gets the same check on the parsed table.

use serde_json::Value;

use super::{Config, ConfigError, FlowConfig};

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// Path in the form `serde_path_to_error` writes: `flows[0].time_scale`.
fn path_text(path: &[Step]) -> String {
    let mut text = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(k);
            }
            Step::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

/// The error for a non-finite number at `path`; `shown` is how the user wrote it (`nan`, `inf`).
fn refuse(path: &[Step], shown: &str) -> ConfigError {
    let what = if shown.contains("nan") { "is not a number" } else { "is not a finite number" };
    let expected = match example(path) {
        Some(Value::Number(n)) => format!("expected a finite number like {n}"),
        Some(Value::String(s)) => format!("expected a value like \"{s}\""),
        _ => "expected a finite number".to_string(),
    };
    ConfigError::new(path_text(path), format!("{shown} {what}; {expected}"))
}

/// The default value at `path`, as an example of what belongs there (a flow's keys from a default
/// flow).
fn example(path: &[Step]) -> Option<Value> {
    let (mut node, rest) = match path {
        [Step::Key(k), Step::Index(_), rest @ ..] if k == "flows" => {
            (serde_json::to_value(FlowConfig::default()).ok()?, rest)
        }
        _ => {
            // Every section has defaults, so an empty document is the default config.
            let config: Config = serde_json::from_str("{}").ok()?;
            (serde_json::to_value(config).ok()?, path)
        }
    };
    for step in rest {
        node = match step {
            Step::Key(k) => node.get(k)?.clone(),
            Step::Index(i) => node.get(i)?.clone(),
        };
    }
    Some(node)
}

/// Finds `NaN`, `Infinity` or `-Infinity` (Python's `json.dumps` spelling of non-finite floats)
/// outside strings in JSON text, and refuses the first with its key path. Anything else that is
/// not JSON is left to serde_json.
pub(super) fn check_json(text: &str) -> Result<(), ConfigError> {
    enum Frame {
        /// `after_colon`: a value is due (else a key).
        Object {
            key: Option<String>,
            after_colon: bool,
        },
        Array {
            index: usize,
        },
    }
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    let path_of = |stack: &[Frame]| -> Vec<Step> {
        stack
            .iter()
            .filter_map(|f| match f {
                Frame::Object { key, .. } => key.clone().map(Step::Key),
                Frame::Array { index } => Some(Step::Index(*index)),
            })
            .collect()
    };
    while i < bytes.len() {
        match bytes[i] {
            b'{' => stack.push(Frame::Object { key: None, after_colon: false }),
            b'[' => stack.push(Frame::Array { index: 0 }),
            b'}' | b']' => {
                stack.pop();
            }
            b':' => {
                if let Some(Frame::Object { after_colon, .. }) = stack.last_mut() {
                    *after_colon = true;
                }
            }
            b',' => match stack.last_mut() {
                Some(Frame::Object { after_colon, .. }) => *after_colon = false,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, after_colon: false }) = stack.last_mut() {
                    let raw = text.get(start..=i.min(bytes.len() - 1)).unwrap_or("\"\"");
                    *key = Some(serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.trim_matches('"').into()));
                }
            }
            b'N' | b'I' | b'-' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || matches!(bytes[i], b'-' | b'+' | b'.')) {
                    i += 1;
                }
                let shown = match &text[start..i] {
                    "NaN" => "nan",
                    "Infinity" => "inf",
                    "-Infinity" => "-inf",
                    _ => continue,
                };
                return Err(refuse(&path_of(&stack), shown));
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The same check on a parsed TOML document.
pub(super) fn check_toml(table: &toml::Table) -> Result<(), ConfigError> {
    fn walk(value: &toml::Value, path: &mut Vec<Step>) -> Result<(), ConfigError> {
        match value {
            toml::Value::Float(f) if !f.is_finite() => {
                let shown = if f.is_nan() {
                    "nan"
                } else if *f > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                Err(refuse(path, shown))
            }
            toml::Value::Table(t) => walk_table(t, path),
            toml::Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(Step::Index(i));
                    walk(item, path)?;
                    path.pop();
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
    fn walk_table(table: &toml::Table, path: &mut Vec<Step>) -> Result<(), ConfigError> {
        for (key, value) in table {
            path.push(Step::Key(key.clone()));
            walk(value, path)?;
            path.pop();
        }
        Ok(())
    }
    walk_table(table, &mut Vec::new())
}
