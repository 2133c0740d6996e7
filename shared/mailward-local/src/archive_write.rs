//! Writing large, write-once objects past the page cache (Linux `O_DIRECT`).
//!
//! Raw report deliveries run to tens of MB, are written once and are almost never read again
//! (they are kept for the operator, never served). A buffered write copies every byte into
//! the page cache in the kernel, which `mailward-bench ingest` measured as the largest cost of
//! ingesting an uncompressed report after parsing it, and fills the cache with data nobody
//! reads. A direct write lets the device take the bytes where they are when they lie at an
//! aligned address (a large buffer nearly always does), else from a small aligned buffer they
//! are copied into; no page-cache copy either way. Filesystems without direct I/O (tmpfs) and
//! small objects take the ordinary buffered write.

use std::io::{self, Write as _};
use std::path::Path;

/// Objects smaller than this are written through the page cache (a direct write is a
/// synchronous device write: not worth it for small objects).
pub const DIRECT_MIN_BYTES: usize = 1 << 20;
/// The alignment direct I/O needs for memory, file offsets and lengths (the largest logical
/// block size in use; 512 would do on most devices).
const ALIGN: usize = 4096;
/// The aligned buffer bytes at an unaligned address pass through (and the largest write).
const CHUNK: usize = 1 << 20;

/// Writes `bytes` as the whole content of `path` (created or truncated): directly when the
/// object is large and the filesystem allows it, else through the page cache.
pub fn write_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_file_with(path, bytes, write_direct)
}

/// [`write_file`] with the direct write given (so the fallback can be tested on any
/// filesystem: tmpfs accepts `O_DIRECT` on recent kernels).
fn write_file_with(
    path: &Path,
    bytes: &[u8],
    direct: impl FnOnce(&Path, &[u8]) -> io::Result<()>,
) -> io::Result<()> {
    if bytes.len() >= DIRECT_MIN_BYTES {
        match direct(path, bytes) {
            Ok(()) => return Ok(()),
            // The filesystem (or platform) has no direct I/O: write it the ordinary way.
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {}
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {}
            Err(e) => return Err(e),
        }
    }
    std::fs::write(path, bytes)
}

/// The direct write: whole aligned blocks, taken where they are when `bytes` starts at an
/// aligned address, else copied through an aligned buffer; the last one padded with zeros and
/// the file then cut to the object's length.
#[cfg(target_os = "linux")]
fn write_direct(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)?;
    let rest = if bytes.as_ptr().align_offset(ALIGN) == 0 {
        let (blocks, rest) = bytes.split_at(bytes.len() / ALIGN * ALIGN);
        for chunk in blocks.chunks(CHUNK) {
            file.write_all(chunk)?;
        }
        rest
    } else {
        bytes
    };
    if !rest.is_empty() {
        copy_direct(&mut file, rest)?;
    }
    file.set_len(bytes.len() as u64)
}

/// Writes `bytes` at the file's (aligned) position through an aligned buffer, the last block
/// padded with zeros.
#[cfg(target_os = "linux")]
fn copy_direct(file: &mut std::fs::File, bytes: &[u8]) -> io::Result<()> {
    let mut buffer = vec![0u8; bytes.len().min(CHUNK).next_multiple_of(ALIGN) + ALIGN];
    let start = buffer.as_ptr().align_offset(ALIGN);
    let aligned = &mut buffer[start..start + bytes.len().min(CHUNK).next_multiple_of(ALIGN)];
    for chunk in bytes.chunks(CHUNK) {
        let padded = chunk.len().next_multiple_of(ALIGN);
        aligned[..chunk.len()].copy_from_slice(chunk);
        aligned[chunk.len()..padded].fill(0);
        file.write_all(&aligned[..padded])?;
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn write_direct(_: &Path, _: &[u8]) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4099) as u8).collect()
    }

    #[test]
    fn large_objects_of_any_length_read_back_exactly_whatever_their_address() {
        let dir = tempfile::tempdir().unwrap();
        for len in [
            DIRECT_MIN_BYTES,
            DIRECT_MIN_BYTES + 1,
            3 * CHUNK + 123,
            2 * CHUNK,
        ] {
            // At an aligned address (written where they are, but for a tail) and one byte
            // past it (copied through the aligned buffer).
            let room = pattern(len + 2 * ALIGN);
            let aligned = room.as_ptr().align_offset(ALIGN);
            for at in [aligned, aligned + 1] {
                let bytes = &room[at..at + len];
                let path = dir.path().join(format!("object-{len}-{at}"));
                write_file(&path, bytes).unwrap();
                assert!(
                    std::fs::read(&path).unwrap() == bytes,
                    "{len} bytes at {at}"
                );
                // And directly, whatever the filesystem under the test prefers.
                match write_direct(&path, bytes) {
                    Ok(()) => assert!(std::fs::read(&path).unwrap() == bytes),
                    Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}"),
                }
            }
        }
    }

    #[test]
    fn a_shorter_object_replaces_a_longer_one_completely() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("object");
        write_file(&path, &pattern(3 * CHUNK)).unwrap();
        let shorter = pattern(DIRECT_MIN_BYTES + 5);
        write_file(&path, &shorter).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), shorter);
        write_file(&path, b"small").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"small");
    }

    #[test]
    fn a_refused_direct_write_falls_back_to_the_buffered_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("object");
        let bytes = pattern(DIRECT_MIN_BYTES + 77);
        // The filesystem refuses direct I/O after a partial write: the whole object is
        // rewritten through the page cache.
        let refusing = |path: &Path, bytes: &[u8]| {
            std::fs::write(path, &bytes[..4096])?;
            Err(io::Error::from_raw_os_error(libc::EINVAL))
        };
        write_file_with(&path, &bytes, refusing).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
        // Any other failure is the caller's to see, not hidden by a second attempt.
        let failing = |_: &Path, _: &[u8]| Err(io::Error::from_raw_os_error(libc::ENOSPC));
        let err = write_file_with(&path, &bytes, failing).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
    }
}
