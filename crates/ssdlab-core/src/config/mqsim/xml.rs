//! A small element tree, enough for MQSim's files: names, text, children and line numbers; and
//! the tags of one parameter set, read by name with the value parsers (whole number, number,
//! percentage, boolean, enumerated value, id list). Whatever is left unread is reported as unknown.

use std::cell::Cell;
use std::collections::BTreeMap;

use quick_xml::events::Event;
use quick_xml::Reader;

use super::tags::closest;
use crate::config::ConfigError;

pub(super) struct Element {
    pub(super) name: String,
    pub(super) text: String,
    pub(super) line: usize,
    pub(super) children: Vec<Element>,
}

/// Reads `file`, whose root should be `<root>` (`what` names the file's role in messages: "an
/// MQSim device file").
pub(super) fn parse_xml(file: &str, text: &str, root_name: &str, what: &str) -> Result<Element, ConfigError> {
    let line_of = |pos: u64| {
        let end = (pos as usize).min(text.len());
        text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
    };
    let malformed =
        |line: usize, reason: String| ConfigError::new(format!("{file}:{line}"), format!("malformed XML: {reason}"));
    if text.trim().is_empty() {
        return Err(ConfigError::new(
            file,
            format!("the file is empty: expected {what} with an <{root_name}> element"),
        ));
    }
    // XML 1.0 (section 2.2, Char) allows no control character but tab, line feed and carriage
    // return. quick-xml passes them through as text; MQSim's parser (rapidxml) stops reading at a
    // NUL, so the rest of the file would be lost. Either way the file is damaged: say where.
    if let Some((at, c)) = text.char_indices().find(|(_, c)| c.is_control() && !matches!(c, '\t' | '\n' | '\r')) {
        let shown = if c == '\0' {
            "a NUL byte (character 0)".to_string()
        } else {
            format!("control character U+{:04X}", c as u32)
        };
        return Err(malformed(line_of(at as u64), format!("{shown} is not allowed in XML; the file is damaged")));
    }
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(true);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader.read_event().map_err(|e| malformed(line_of(reader.error_position()), e.to_string()))?;
        let here = line_of(reader.buffer_position());
        let mut finished = None;
        match event {
            Event::Start(e) | Event::Empty(e) if root.is_some() && stack.is_empty() => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                return Err(malformed(here, format!("a second root element <{name}> after the first one ended")));
            }
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                stack.push(Element { name, text: String::new(), line: here, children: Vec::new() });
            }
            Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                finished = Some(Element { name, text: String::new(), line: here, children: Vec::new() });
            }
            Event::End(_) => finished = stack.pop(),
            Event::Text(t) => {
                let value = t.unescape().map_err(|e| malformed(here, e.to_string()))?;
                match stack.last_mut() {
                    Some(open) => open.text.push_str(&value),
                    None if value.trim().is_empty() => {}
                    None => return Err(malformed(here, format!("text \"{}\" outside the root element", value.trim()))),
                }
            }
            Event::CData(c) => {
                if let Some(open) = stack.last_mut() {
                    open.text.push_str(&String::from_utf8_lossy(&c.into_inner()));
                }
            }
            Event::Eof => break,
            _ => {} // declaration, comments, processing instructions, doctype
        }
        if let Some(element) = finished {
            match stack.last_mut() {
                Some(parent) => parent.children.push(element),
                None => root = Some(element),
            }
        }
    }
    if let Some(open) = stack.last() {
        return Err(malformed(open.line, format!("<{}> is never closed", open.name)));
    }
    root.ok_or_else(|| {
        ConfigError::new(file, format!("the file holds no element (only comments or a declaration): expected {what} with an <{root_name}> element"))
    })
}

// ------------------------------------------------------------------------------------------------
// The tags of one parameter set, read by name; whatever is left unread is reported as unknown.

struct Field<'a> {
    element: &'a Element,
    used: Cell<bool>,
}

pub(super) struct Params<'a> {
    file: &'a str,
    /// Where the tags live, for messages: "Device_Parameter_Set", "flow-0 (IO_Flow_...)".
    section: String,
    fields: Vec<Field<'a>>,
}

impl<'a> Params<'a> {
    pub(super) fn new(file: &'a str, section: String, element: &'a Element, warnings: &mut Vec<String>) -> Self {
        let fields: Vec<Field> =
            element.children.iter().map(|e| Field { element: e, used: Cell::new(false) }).collect();
        let mut seen: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for f in &fields {
            seen.entry(f.element.name.as_str()).or_default().push(f.element.line);
        }
        for (name, lines) in seen {
            if lines.len() > 1 {
                let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                warnings.push(format!(
                    "{name} appears {} times in {section} ({file} lines {}); the last one is used, as MQSim does",
                    lines.len(),
                    lines.join(", ")
                ));
            }
        }
        Self { file, section, fields }
    }

    /// The last element with this name (MQSim reads the tags in order: the last one wins).
    pub(super) fn element(&self, name: &str) -> Option<&'a Element> {
        let mut found = None;
        for f in &self.fields {
            if f.element.name == name {
                f.used.set(true);
                found = Some(f.element);
            }
        }
        found
    }

    pub(super) fn error(&self, element: &Element, expected: &str) -> ConfigError {
        ConfigError::new(
            format!("{}:{}: {}", self.file, element.line, element.name),
            format!("expected {expected}, got \"{}\"", element.text.trim()),
        )
    }

    pub(super) fn text(&self, name: &str) -> Option<String> {
        self.element(name).map(|e| e.text.trim().to_string())
    }

    pub(super) fn int(&self, name: &str) -> Result<Option<u64>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => e.text.trim().parse::<u64>().map(Some).map_err(|_| self.error(e, "a whole number")),
        }
    }

    /// A count of the flash geometry (channels, chips, dies, planes, blocks, pages): at least 1,
    /// and at most what ssdlab's 32-bit geometry fields hold. MQSim reads these into an
    /// `unsigned int` with `std::stoul`, so a larger value silently wraps there; checking here,
    /// before the importer sizes anything by them, keeps a typo from becoming a crash.
    pub(super) fn count(&self, name: &str, unit: &str) -> Result<Option<u64>, ConfigError> {
        let value = self.int(name)?;
        if let (Some(v), Some(e)) = (value, self.element(name)) {
            if v == 0 {
                return Err(self.error(e, &format!("at least 1 {unit}")));
            }
            if v > u64::from(u32::MAX) {
                return Err(ConfigError::new(
                    format!("{}:{}: {}", self.file, e.line, e.name),
                    format!("{v} is more than ssdlab supports (at most {})", u32::MAX),
                ));
            }
        }
        Ok(value)
    }

    pub(super) fn num(&self, name: &str) -> Result<Option<f64>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => match e.text.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Some(v)),
                _ => Err(self.error(e, "a number")),
            },
        }
    }

    pub(super) fn percentage(&self, name: &str) -> Result<Option<f64>, ConfigError> {
        let value = self.num(name)?;
        if let (Some(v), Some(e)) = (value, self.element(name)) {
            if !(0.0..=100.0).contains(&v) {
                return Err(self.error(e, "a percentage between 0 and 100"));
            }
        }
        Ok(value)
    }

    pub(super) fn boolean(&self, name: &str) -> Result<Option<bool>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => match e.text.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                _ => Err(self.error(e, "true or false")),
            },
        }
    }

    /// An enumerated value, compared case-insensitively as MQSim does; returned in upper case.
    pub(super) fn choice(&self, name: &str, allowed: &[&str]) -> Result<Option<String>, ConfigError> {
        match self.element(name) {
            None => Ok(None),
            Some(e) => {
                let value = e.text.trim().to_ascii_uppercase();
                if allowed.contains(&value.as_str()) {
                    Ok(Some(value))
                } else {
                    Err(self.error(e, &format!("one of {}", allowed.join(", "))))
                }
            }
        }
    }

    /// A comma-separated list of ids, each below `count`.
    pub(super) fn ids(&self, name: &str, count: u64) -> Result<Option<Vec<u64>>, ConfigError> {
        let Some(e) = self.element(name) else { return Ok(None) };
        let mut ids = Vec::new();
        for part in e.text.split(',') {
            let id =
                part.trim().parse::<u64>().map_err(|_| self.error(e, "a comma-separated list of whole numbers"))?;
            if id >= count {
                return Err(
                    self.error(e, &format!("ids from 0 to {} (the device has {count})", count.saturating_sub(1)))
                );
            }
            ids.push(id);
        }
        ids.sort_unstable();
        ids.dedup();
        Ok(Some(ids))
    }

    /// Reports every tag nobody read as unknown, with the closest known tag.
    pub(super) fn finish(self, known: &[&str], warnings: &mut Vec<String>) {
        for f in self.fields.iter().filter(|f| !f.used.get()) {
            let name = &f.element.name;
            let hint = match closest(name, known) {
                Some(k) => format!("; did you mean {k}?"),
                None => String::new(),
            };
            warnings.push(format!(
                "unknown tag {name} in {} ({} line {}) is ignored{hint}",
                self.section, self.file, f.element.line
            ));
        }
    }
}
