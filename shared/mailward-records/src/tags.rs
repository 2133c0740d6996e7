//! The `tag=value; tag=value` list shared by DKIM (RFC 6376 §3.2), BIMI, the MTA-STS TXT record
//! and TLS-RPT. Parsing is lenient about whitespace (folding whitespace around names, `=` and
//! values is dropped) and strict about structure; each module decides which issues are errors.

/// One `name=value` pair, with surrounding whitespace removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tag {
    /// The tag name as written (case preserved).
    pub name: String,
    /// The value, trimmed; inner whitespace is kept.
    pub value: String,
}

/// A structural problem in the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TagIssue {
    /// A non-empty segment with no `=`.
    MissingEquals(String),
    /// A tag name that is empty or not `ALPHA *(ALPHA / DIGIT / "_")`.
    InvalidName(String),
}

impl TagIssue {
    /// A message for people.
    pub fn message(&self) -> String {
        match self {
            TagIssue::MissingEquals(s) => format!("\"{}\" is not a tag=value pair", clip(s)),
            TagIssue::InvalidName(s) => format!("\"{}\" is not a valid tag name", clip(s)),
        }
    }
}

/// The parsed list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TagList {
    /// Tags in record order (duplicates kept).
    pub tags: Vec<Tag>,
    /// Structural issues, in record order.
    pub issues: Vec<TagIssue>,
}

impl TagList {
    /// The first tag called `name` (exact, case-sensitive match).
    pub fn get(&self, name: &str) -> Option<&Tag> {
        self.tags.iter().find(|t| t.name == name)
    }

    /// The first tag called `name`, ignoring ASCII case.
    pub fn get_ignore_case(&self, name: &str) -> Option<&Tag> {
        self.tags.iter().find(|t| t.name.eq_ignore_ascii_case(name))
    }

    /// Names that occur more than once (optionally ignoring ASCII case), each reported once, in
    /// record order.
    pub fn duplicates(&self, case_insensitive: bool) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        let mut dups: Vec<String> = Vec::new();
        for t in &self.tags {
            let key = if case_insensitive {
                t.name.to_ascii_lowercase()
            } else {
                t.name.clone()
            };
            if seen.contains(&key) {
                if !dups.contains(&key) {
                    dups.push(key);
                }
            } else {
                seen.push(key);
            }
        }
        dups
    }
}

/// Which tag names a format allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    /// RFC 6376 §3.2 `ALPHA *(ALPHA / DIGIT / "_")` (DKIM, BIMI).
    Dkim,
    /// RFC 8461 / RFC 8460 extension names: `(ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")`.
    Extended,
}

/// Splits a record into tags with DKIM-style names. Empty segments (a trailing `;`, or `;;`)
/// are skipped.
pub(crate) fn parse(record: &str) -> TagList {
    parse_with(record, Names::Dkim)
}

/// Splits a record into tags, validating names with `names`.
pub(crate) fn parse_with(record: &str, names: Names) -> TagList {
    let mut out = TagList::default();
    for segment in record.split(';') {
        let segment = segment.trim_matches(is_fws);
        if segment.is_empty() {
            continue;
        }
        let Some((name, value)) = segment.split_once('=') else {
            out.issues
                .push(TagIssue::MissingEquals(segment.to_string()));
            continue;
        };
        let name = name.trim_matches(is_fws);
        let ok = match names {
            Names::Dkim => is_tag_name(name),
            Names::Extended => is_extended_name(name),
        };
        if !ok {
            out.issues.push(TagIssue::InvalidName(name.to_string()));
            continue;
        }
        out.tags.push(Tag {
            name: name.to_string(),
            value: value.trim_matches(is_fws).to_string(),
        });
    }
    out
}

/// `(ALPHA / DIGIT) *31(ALPHA / DIGIT / "_" / "-" / ".")`.
fn is_extended_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 32
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Folding whitespace characters: space, tab, CR, LF.
pub(crate) fn is_fws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// `ALPHA *(ALPHA / DIGIT / "_")`.
fn is_tag_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// True when the first tag of the record is `name` (case-sensitive or not), i.e. the version tag
/// comes first as every one of these formats requires.
pub(crate) fn first_is(list: &TagList, name: &str) -> bool {
    list.tags
        .first()
        .is_some_and(|t| t.name.eq_ignore_ascii_case(name))
}

/// Shortens attacker-controlled text before it goes into a message.
pub(crate) fn clip(s: &str) -> String {
    const MAX: usize = 80;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(MAX).collect();
        c.push('…');
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_and_trims() {
        let l = parse(" v = DKIM1 ;\r\n\tk=rsa; p=AB CD ;; ");
        assert!(l.issues.is_empty());
        assert_eq!(l.tags.len(), 3);
        assert_eq!(l.get("v").map(|t| t.value.as_str()), Some("DKIM1"));
        assert_eq!(l.get("p").map(|t| t.value.as_str()), Some("AB CD"));
    }

    #[test]
    fn reports_structure() {
        let l = parse("v=1; junk; 9x=1; =2; a=b=c");
        assert_eq!(
            l.issues,
            vec![
                TagIssue::MissingEquals("junk".into()),
                TagIssue::InvalidName("9x".into()),
                TagIssue::InvalidName("".into()),
            ]
        );
        assert_eq!(l.get("a").map(|t| t.value.as_str()), Some("b=c"));
    }

    #[test]
    fn duplicates_and_clip() {
        let l = parse("v=1; V=2; v=3; a=1");
        assert_eq!(l.duplicates(false), vec!["v".to_string()]);
        assert_eq!(l.duplicates(true), vec!["v".to_string()]);
        assert!(clip(&"x".repeat(200)).ends_with('…'));
        assert!(first_is(&l, "V"));
        let ext = parse_with("v=STSv1; id=1; x-ext.1=a", Names::Extended);
        assert!(ext.issues.is_empty());
        assert_eq!(parse("x-ext=a").issues.len(), 1);
    }
}
