//! Text from another machine: a file or standard input, read up to a limit and decoded.

use std::io::Read;
use std::path::Path;

use anyhow::Result;
use gpu_doctor_probes::parse::paste::MAX_TEXT_BYTES;

use crate::exit::InputError;

/// Reads text from a file or standard input (`-`), at most [`MAX_TEXT_BYTES`] of it; unreadable
/// input is an `InputError`. Longer input is cut there with a warning on standard error that says
/// how much was read, and the paste reader notes the cut in the report too.
pub(crate) fn read_input(path: &Path) -> Result<String> {
    let (bytes, cut) = if path == Path::new("-") {
        read_capped(std::io::stdin().lock()).map_err(|e| InputError(format!("could not read standard input: {e}")))?
    } else {
        let file =
            std::fs::File::open(path).map_err(|e| InputError(format!("could not read {}: {e}", path.display())))?;
        read_capped(file).map_err(|e| InputError(format!("could not read {}: {e}", path.display())))?
    };
    if cut {
        eprintln!(
            "gpu-doctor: warning: {} is longer than {} MiB; only its first {MAX_TEXT_BYTES} bytes were read",
            path.display(),
            MAX_TEXT_BYTES / (1024 * 1024)
        );
    }
    Ok(decode_text(&bytes))
}

/// At most `MAX_TEXT_BYTES + 1` bytes of `reader` (the one past the limit tells the paste reader
/// that the text was cut), and whether there was more than the limit.
pub(crate) fn read_capped(reader: impl Read) -> std::io::Result<(Vec<u8>, bool)> {
    let limit = MAX_TEXT_BYTES + 1;
    let mut buf = Vec::new();
    reader.take(limit as u64).read_to_end(&mut buf)?;
    let cut = buf.len() >= limit;
    Ok((buf, cut))
}

/// Text from another machine as a string. UTF-16 with a byte-order mark (what PowerShell's `>`
/// writes) is decoded as such; otherwise it is UTF-8, whose byte-order mark is dropped. Invalid
/// sequences are replaced, not refused, since a stray byte in prose must not hide the facts
/// around it.
pub(crate) fn decode_text(bytes: &[u8]) -> String {
    let utf16 = |bytes: &[u8], unit: fn([u8; 2]) -> u16| {
        let units = bytes.chunks(2).map(|c| match *c {
            [a, b] => unit([a, b]),
            _ => 0xFFFD, // an odd last byte: a cut character
        });
        char::decode_utf16(units).map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER)).collect()
    };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => utf16(rest, u16::from_le_bytes),
        [0xFE, 0xFF, rest @ ..] => utf16(rest, u16::from_be_bytes),
        _ => match utf16_without_mark(bytes) {
            Some(Endian::Little) => utf16(bytes, u16::from_le_bytes),
            Some(Endian::Big) => utf16(bytes, u16::from_be_bytes),
            None => String::from_utf8_lossy(bytes).trim_start_matches('\u{feff}').to_owned(),
        },
    }
}

enum Endian {
    Little,
    Big,
}

/// UTF-16 written without a byte-order mark (PowerShell's `Out-File` in some versions, some editors):
/// text in it is mostly ASCII, so every other byte is zero. UTF-8 text has no zero bytes at all, so
/// a third of the even or odd bytes of the first 4 KiB being zero, and almost none of the others, is
/// UTF-16; which half holds the zeros says which end comes first.
fn utf16_without_mark(bytes: &[u8]) -> Option<Endian> {
    let head = &bytes[..bytes.len().min(4096) & !1];
    let pairs = head.len() / 2;
    if pairs < 4 {
        return None;
    }
    let zero_even = head.iter().step_by(2).filter(|&&b| b == 0).count();
    let zero_odd = head.iter().skip(1).step_by(2).filter(|&&b| b == 0).count();
    let many = |n: usize| n * 3 >= pairs;
    let few = |n: usize| n * 20 <= pairs;
    if many(zero_odd) && few(zero_even) {
        Some(Endian::Little)
    } else if many(zero_even) && few(zero_odd) {
        Some(Endian::Big)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn utf16(text: &str, bom: &[u8], unit: fn(u16) -> [u8; 2]) -> Vec<u8> {
        bom.iter().copied().chain(text.encode_utf16().flat_map(unit)).collect()
    }

    #[test]
    fn utf16_with_a_byte_order_mark_decodes_either_way_round() {
        let text = "NVIDIA-SMI 550.54.14  Driver Version: 550.54.14\r\nGr\u{f6}\u{df}e: \u{8bbe}\u{5907} \u{1f680}\r\n";
        assert_eq!(decode_text(&utf16(text, &[0xFF, 0xFE], u16::to_le_bytes)), text);
        assert_eq!(decode_text(&utf16(text, &[0xFE, 0xFF], u16::to_be_bytes)), text);
        // Cut in the middle of a character, or a lone surrogate: replaced, not refused.
        let mut cut = utf16("ab\u{1f680}", &[0xFF, 0xFE], u16::to_le_bytes);
        cut.truncate(cut.len() - 1);
        assert_eq!(decode_text(&cut), "ab\u{fffd}\u{fffd}");
    }

    #[test]
    fn utf16_without_a_mark_is_recognised_by_its_zero_bytes() {
        let text = "NVIDIA-SMI 550.54.14  Driver Version: 550.54.14  CUDA Version: 12.4\r\nGr\u{f6}\u{df}e\r\n";
        assert_eq!(decode_text(&utf16(text, &[], u16::to_le_bytes)), text);
        assert_eq!(decode_text(&utf16(text, &[], u16::to_be_bytes)), text);
        // Mostly non-ASCII UTF-16 has no zero pattern: read as it was before (lossy UTF-8), no panic.
        let cjk = utf16("\u{8bbe}\u{5907}\u{8bbe}\u{5907}\u{8bbe}\u{5907}", &[], u16::to_le_bytes);
        assert!(!decode_text(&cjk).is_empty());
        // Binary with zeros everywhere and short input stay UTF-8.
        assert_eq!(decode_text(&[0u8; 64]), "\0".repeat(64));
        assert_eq!(decode_text(b"a\0b"), "a\0b");
        // An odd length (cut) still decodes, with the cut character replaced.
        let mut cut = utf16("Driver Version: 550", &[], u16::to_le_bytes);
        cut.pop();
        assert_eq!(decode_text(&cut), "Driver Version: 55\u{fffd}");
    }

    #[test]
    fn utf8_keeps_working_with_or_without_its_mark() {
        assert_eq!(decode_text("\u{feff}Driver Version: 550".as_bytes()), "Driver Version: 550");
        assert_eq!(decode_text(b"ok \xff ok"), "ok \u{fffd} ok");
        assert_eq!(decode_text(b""), "");
    }

    #[test]
    fn reading_stops_one_byte_past_the_limit() {
        let (bytes, cut) = read_capped(std::io::repeat(0).take(u64::MAX)).unwrap();
        assert!(cut);
        assert_eq!(bytes.len(), MAX_TEXT_BYTES + 1);
        let (bytes, cut) = read_capped(&b"short"[..]).unwrap();
        assert_eq!((bytes.as_slice(), cut), (&b"short"[..], false));
        let (bytes, cut) = read_capped(std::io::repeat(b'a').take(MAX_TEXT_BYTES as u64)).unwrap();
        assert_eq!((bytes.len(), cut), (MAX_TEXT_BYTES, false));
    }
}
