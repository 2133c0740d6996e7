//! MIME helpers shared by the container walk and the failure-report reader.

/// A MIME part's `type/subtype`, lower-cased; `text/plain` when it declares none (RFC 2045
/// §5.2).
pub fn part_type(part: &mail_parser::MessagePart<'_>) -> String {
    use mail_parser::MimeHeaders as _;
    part.content_type()
        .map(|c| {
            format!(
                "{}/{}",
                c.ctype().to_ascii_lowercase(),
                c.subtype().unwrap_or_default().to_ascii_lowercase()
            )
        })
        .unwrap_or_else(|| "text/plain".into())
}
