//! The check a trace gets as it is opened: it is read up to its first record, so that a file
//! which holds none (empty, only comments, only a column header, or a file read in the wrong
//! format, whose lines blkparse would all pass over as "not events") is an error that names the
//! file and says what it holds, instead of a run of zero requests (issue 12, F12).

use super::*;

/// What a trace holds up to its first record (or its end).
#[derive(Debug, Default)]
pub(super) struct Survey {
    pub(super) bytes: u64,
    pub(super) lines: u64,
    /// Lines that are neither blank nor comments.
    pub(super) content: u64,
    /// A column header (the CSV formats' first line).
    pub(super) header: Option<String>,
    /// Lines of the format without a request (fio's header, add, open, close, wait).
    pub(super) meta: u64,
    /// blkparse events of the action not replayed, and how many the other action would replay.
    pub(super) other_events: u64,
    pub(super) other_action_records: u64,
    /// Lines passed over as not records (blkparse), with the first one.
    pub(super) skipped: u64,
    pub(super) first_skipped: Option<(u64, String)>,
}

/// A line quoted in a message: at most 80 characters.
pub(super) fn quote(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("\"{}...\"", &line[..cut]),
        None => format!("\"{line}\""),
    }
}

/// What a record of `format` looks like, for messages about files that hold none.
pub(super) fn expected(format: TraceFormat) -> String {
    let example = match format {
        TraceFormat::Auto => return format!("records of {}", format.layout()),
        TraceFormat::Mqsim => mqsim::EXAMPLE,
        TraceFormat::Msr => msr::EXAMPLE,
        TraceFormat::Spc => spc::EXAMPLE,
        TraceFormat::Blkparse => blkparse::EXAMPLE,
        TraceFormat::Fio => fio::EXAMPLE,
        TraceFormat::Alibaba => alibaba::EXAMPLE,
        TraceFormat::Tencent => tencent::EXAMPLE,
    };
    format!("expected {} records like `{example}` ({})", format.name(), format.layout())
}

/// The hint for a file that `format` cannot read: the format it looks like, where the sniffer can
/// tell one from its first lines.
pub(super) fn looks_like(path: &str, format: TraceFormat, first_lines: &[String]) -> Option<String> {
    match sniff::detect(path, first_lines) {
        Ok(other) if other != format => {
            Some(format!("the file looks like a trace in {0} format: set format = \"{0}\"", other.name()))
        }
        _ => None,
    }
}

/// The error for a trace that holds no record, saying what it holds instead.
pub(super) fn no_records(
    path: &str,
    format: TraceFormat,
    action: Option<&str>,
    survey: &Survey,
    first_lines: &[String],
) -> OpenError {
    let Survey { bytes, lines, content, meta, other_events, skipped, .. } = *survey;
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    let reason = if bytes == 0 {
        format!("trace file \"{path}\" is empty; {}", expected(format))
    } else if content == 0 {
        format!(
            "trace file \"{path}\" holds no records ({lines} line{}, all blank or comments); {}",
            plural(lines),
            expected(format)
        )
    } else if let (Some(header), 1) = (&survey.header, content) {
        format!(
            "trace file \"{path}\" holds no records, only the column header {}; {}",
            quote(header),
            expected(format)
        )
    } else if let (Some(action), true) = (action, other_events > 0) {
        let other = if action == "D" { "Q" } else { "D" };
        let advice = if survey.other_action_records > 0 {
            format!(
                "it has {} {other} event{}: set blkparse_event = \"{other}\" to replay them",
                survey.other_action_records,
                plural(survey.other_action_records)
            )
        } else {
            expected(format)
        };
        format!(
            "trace file \"{path}\" holds no {action} events with data to replay (blkparse_event = \"{action}\"), only {other_events} event{} of other actions; {advice}",
            plural(other_events)
        )
    } else if skipped > 0 && skipped + survey.header.is_some() as u64 == content {
        let (line, text) = survey.first_skipped.clone().unwrap_or_default();
        let hint = looks_like(path, format, first_lines).unwrap_or_else(|| expected(format));
        format!(
            "no line of \"{path}\" parsed as a {} record ({content} line{} passed over as not records); the first, line {line}, is {}; {hint}",
            format.name(),
            plural(content),
            quote(&text)
        )
    } else if format == TraceFormat::Fio {
        format!(
            "trace file \"{path}\" holds no read, write, trim or sync lines, only its header and {} add, open, close or wait line{}; {}",
            meta.saturating_sub(1),
            plural(meta.saturating_sub(1)),
            expected(format)
        )
    } else {
        format!(
            "trace file \"{path}\" holds no records ({content} line{} that are not records); {}",
            plural(content),
            expected(format)
        )
    };
    OpenError::Option { field: "path", reason }
}

impl TraceReader {
    /// The first lines that are neither blank nor comments (at most [`SNIFF_LINES`]), then back
    /// to the start.
    pub(super) fn first_lines(&mut self) -> Result<Vec<String>, OpenError> {
        let mut lines = Vec::new();
        while lines.len() < SNIFF_LINES && self.read_line()? {
            let text = String::from_utf8_lossy(&self.buf);
            let text = text.trim();
            if !text.is_empty() && !text.starts_with('#') {
                lines.push(text.to_string());
            }
        }
        let read = self.line_number;
        self.rewind()?;
        self.line_number = read; // for a file of only comments, the lines it has
        Ok(lines)
    }

    /// Reads up to the first record with a copy of the parser, then back to the start: a file
    /// with no record, or whose lines up to it do not parse, is an error now rather than a run of
    /// zero requests (or an error after preconditioning).
    pub(super) fn survey(&mut self, first_lines: &[String]) -> Result<(), OpenError> {
        let mut parser = self.parser.clone();
        let action = match &self.parser {
            Parser::Blkparse { action } => Some(*action),
            _ => None,
        };
        // blkparse: the other action, to suggest it when the replayed one has no events.
        let mut other = action.map(|a| Parser::Blkparse { action: if a == "D" { "Q" } else { "D" } });
        self.line_number = 0;
        let mut survey = Survey { bytes: self.file_bytes, ..Survey::default() };
        while self.read_line()? {
            let text = String::from_utf8_lossy(&self.buf);
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            survey.content += 1;
            let first = survey.content == 1;
            match parser.parse(text, first) {
                Ok(Parsed::Record(_)) => return self.rewind(),
                Ok(Parsed::Meta) => survey.meta += 1,
                Ok(Parsed::Header) => survey.header = Some(text.to_string()),
                Ok(Parsed::OtherEvent) => {
                    survey.other_events += 1;
                    if let Some(Ok(Parsed::Record(_))) = other.as_mut().map(|p| p.parse(text, first)) {
                        survey.other_action_records += 1;
                    }
                }
                Ok(Parsed::Skip) => {
                    survey.skipped += 1;
                    survey.first_skipped.get_or_insert_with(|| (self.line_number, text.to_string()));
                }
                Err(reason) => {
                    let mut e = self.parse_error(&reason);
                    if let Some(hint) = looks_like(&self.path, self.format, first_lines) {
                        e.reason = format!("{}; {hint}", e.reason);
                    }
                    return Err(OpenError::Trace(e));
                }
            }
        }
        survey.lines = self.line_number;
        Err(no_records(&self.path, self.format, action, &survey, first_lines))
    }
}
