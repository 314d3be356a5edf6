//! Format detection: which reader a trace needs, from its first lines.

use super::*;

/// Tells the format of a trace from its first lines that are not blank or comments (at most
/// [`SNIFF_LINES`]): the format whose parser accepts all of them and finds a request or a line
/// of its own among them. fio's header decides alone.
pub(super) fn detect(path: &str, lines: &[String]) -> Result<TraceFormat, OpenError> {
    let unknown = |reason: String| OpenError::Option { field: "format", reason };
    let Some(first) = lines.first() else {
        return Err(unknown(format!(
            "trace file \"{path}\" has no records to tell its format from; set format to one of: {}",
            TraceFormat::names()
        )));
    };
    if first.starts_with("fio version") {
        return match fio::header_version(first) {
            Some(_) => Ok(TraceFormat::Fio),
            None => Err(unknown(format!(
                "trace file \"{path}\" starts with \"{first}\"; only fio iolog versions 2 and 3 are supported"
            ))),
        };
    }
    // Each format reads lines until one does not fit it; it is a candidate if it found a request
    // or a line of its own by then. The candidate that reads the most lines wins, so a malformed
    // line among the first ones is reported by the format's reader, with its line number.
    let mut scores = Vec::new();
    let mut rejections = Vec::new();
    for format in TraceFormat::READERS {
        if format == TraceFormat::Fio {
            continue;
        }
        let mut parser = Parser::new(format, BlkparseEvent::Dispatch);
        let (mut evidence, mut accepted) = (false, 0);
        let mut rejected = None;
        for (i, line) in lines.iter().enumerate() {
            match parser.parse(line, i == 0) {
                Ok(Parsed::Record(_) | Parsed::Meta | Parsed::OtherEvent) => evidence = true,
                Ok(Parsed::Header | Parsed::Skip) => {}
                Err(reason) => {
                    rejected = Some(format!("{} (line {}: {reason})", format.name(), i + 1));
                    break;
                }
            }
            accepted += 1;
        }
        if evidence {
            scores.push((format, accepted));
        } else {
            rejections.push(rejected.unwrap_or_else(|| format!("{} (no record among the first lines)", format.name())));
        }
    }
    let best = scores.iter().map(|&(_, n)| n).max().unwrap_or(0);
    let fits: Vec<TraceFormat> = scores.iter().filter(|&&(_, n)| n == best).map(|&(f, _)| f).collect();
    choose(path, &fits, &rejections)
}

/// The one fitting format, or an error that lists them.
pub(super) fn choose(path: &str, fits: &[TraceFormat], rejections: &[String]) -> Result<TraceFormat, OpenError> {
    match fits {
        [one] => Ok(*one),
        [] => Err(OpenError::Option {
            field: "format",
            reason: format!(
                "cannot tell the format of trace file \"{path}\" from its first lines; set format to one of: {}. Each rejected them: {}",
                TraceFormat::names(),
                rejections.join("; ")
            ),
        }),
        several => Err(OpenError::Option {
            field: "format",
            reason: format!(
                "the first lines of trace file \"{path}\" fit several formats ({}); set format to one of them",
                several.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}
