//! Compression: detected from magic bytes, decoded on a background thread ([`super::pipe`]) so
//! decompression and parsing use both cores.

use std::io::{self, Read};

/// A compression wrapper around a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (one or more concatenated members, as `pigz` and `cat a.gz b.gz` produce).
    Gzip,
    /// zstd (one or more frames).
    Zstd,
    /// xz.
    Xz,
}

/// Bytes needed to recognise every magic number.
pub(crate) const MAGIC_LEN: usize = 6;

impl Compression {
    /// The compression whose magic number starts `head` (pass at least six bytes unless
    /// the input is shorter).
    pub fn detect(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else {
            Compression::None
        }
    }

    /// Lower-case name, as in reports.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
        }
    }

    /// `input` wrapped in this compression's decoder.
    pub(crate) fn decoder(self, input: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Compression::None => input,
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(input)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(input)?),
            Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(input)),
        })
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn round_trip(c: Compression, compressed: Vec<u8>, plain: &[u8]) {
        assert_eq!(Compression::detect(&compressed), c);
        let mut out = vec![];
        c.decoder(Box::new(io::Cursor::new(compressed)))
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, plain);
    }

    #[test]
    fn detects_and_decodes_each_compression() {
        let plain = b"I  0400,3\n L 1000,8\n".repeat(100);
        let mut gz = flate2::write::GzEncoder::new(vec![], flate2::Compression::fast());
        gz.write_all(&plain).unwrap();
        round_trip(Compression::Gzip, gz.finish().unwrap(), &plain);
        round_trip(
            Compression::Zstd,
            zstd::encode_all(&plain[..], 3).unwrap(),
            &plain,
        );
        let mut xz = liblzma::write::XzEncoder::new(vec![], 1);
        xz.write_all(&plain).unwrap();
        round_trip(Compression::Xz, xz.finish().unwrap(), &plain);
        assert_eq!(Compression::detect(b"0x1000\n"), Compression::None);
    }

    #[test]
    fn concatenated_gzip_members_are_all_read() {
        let mut both = vec![];
        for part in [&b"a\n"[..], b"b\n"] {
            let mut gz = flate2::write::GzEncoder::new(vec![], flate2::Compression::fast());
            gz.write_all(part).unwrap();
            both.extend(gz.finish().unwrap());
        }
        round_trip(Compression::Gzip, both, b"a\nb\n");
    }
}
