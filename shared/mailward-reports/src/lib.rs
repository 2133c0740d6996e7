//! Mailward's report reader: turns whatever arrives at the report mailbox (an email, an XML or
//! JSON file, gzip or zip archives, nested in any order) into DMARC aggregate reports
//! ([`aggregate`]), SMTP TLS reports ([`tlsrpt`]), recognised failure reports, or a refusal with
//! its reason. Pure: bytes in, reports out; storage, attribution and aggregation live in the
//! services.
//!
//! Containers are recognised by their first bytes, never by file name or content type
//! ([`container::sniff`]); decompression is capped over the whole input (zip and gzip bombs);
//! one broken payload never hides the others.

pub mod aggregate;
pub mod container;
pub mod failure;
pub mod fold;
mod mime;
pub mod tlsrpt;

pub use container::{Content, Extracted, extract, extract_with};

/// Bounds on the work one input may cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes all decompression of one input may produce, together. Real aggregate reports of
    /// hundreds of thousands of records run to tens of MB; the default leaves room for that.
    pub max_decompressed_bytes: u64,
    /// Deepest XML nesting accepted (a report needs 6).
    pub max_xml_depth: usize,
    /// Deepest nesting of containers (an archive in an archive in an email ...).
    pub max_container_depth: usize,
    /// Most entries read from one zip archive.
    pub max_zip_entries: usize,
    /// Largest gzip of XML decompressed whole and read in place (faster, by half, than reading
    /// it as it is decompressed); larger ones stream, in bounded memory. Decided by the size
    /// the gzip's trailer states, and held to while decompressing. The default, 48 MiB, takes
    /// reports of up to some 65,000 records (a big reporter's day for a busy domain) whole: at
    /// most two such buffers are kept between reports. A report of 100,000 records (60 MB)
    /// streams.
    pub max_in_memory_gzip: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_decompressed_bytes: 256 * 1024 * 1024,
            max_xml_depth: 64,
            max_container_depth: 8,
            max_zip_entries: 64,
            max_in_memory_gzip: 48 * 1024 * 1024,
        }
    }
}
