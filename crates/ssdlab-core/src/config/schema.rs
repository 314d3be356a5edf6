//! The configuration schema as JSON Schema, generated from the config types themselves (their
//! doc comments, defaults and accepted values), so the reference in `docs/configuration.md`
//! cannot drift from what the reader accepts.

use super::Config;

/// JSON Schema (draft 2020-12) of the configuration document: one definition per section,
/// each field with its description and, where it has one, its default.
pub fn json_schema() -> serde_json::Value {
    schemars::schema_for!(Config).to_value()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_documents_every_section_with_defaults() {
        let schema = json_schema();
        let props = &schema["properties"];
        for section in ["seed", "host", "controller", "cache", "ftl", "flash", "precondition", "run", "flows"] {
            assert!(props.get(section).is_some(), "section {section} missing from the schema");
        }
        let flash = &schema["$defs"]["FlashConfig"]["properties"];
        assert_eq!(flash["channels"]["default"], 8, "defaults come from FlashConfig::default()");
        assert_eq!(schema["$defs"]["Duration"]["format"], "duration");
    }
}
