//! Escaping for the HTML the service writes itself (notification mails, the sign-in and
//! unsubscribe pages): names people chose must never become markup.

/// Escapes text for HTML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn names_are_escaped() {
        assert_eq!(
            escape("<b>\"Acme\" & 'Co'</b>"),
            "&lt;b&gt;&quot;Acme&quot; &amp; &#39;Co&#39;&lt;/b&gt;"
        );
    }
}
