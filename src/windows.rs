//! The `--window` argument: a single window size, an inclusive range `A..B`
//! (or `A..=B`), or a comma-separated list of either.

use std::str::FromStr;

/// Window sizes to evaluate, in the order given, each 1-127 (AX.25 k is 1-7
/// with modulo 8 and 1-127 with modulo 128, v2.2 section 6.7.1.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Windows(pub Vec<u32>);

/// Largest window any AX.25 or HDLC modulus allows (modulo 128).
const MAX_WINDOW: u32 = 127;

impl FromStr for Windows {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let mut out = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            let (lo, hi) = match part.split_once("..") {
                Some((lo, hi)) => (lo, hi.strip_prefix('=').unwrap_or(hi)),
                None => (part, part),
            };
            let (lo, hi) = (window(lo, s)?, window(hi, s)?);
            if lo > hi {
                return Err(format!("window range \"{part}\" runs backwards"));
            }
            out.extend(lo..=hi);
        }
        Ok(Windows(out))
    }
}

fn window(text: &str, whole: &str) -> Result<u32, String> {
    let k: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("\"{whole}\" is not a window list: expected e.g. 4, 1..7 or 1,2,4"))?;
    if (1..=MAX_WINDOW).contains(&k) {
        Ok(k)
    } else {
        Err(format!("window {k} is out of range: 1-{MAX_WINDOW}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!("1..7".parse(), Ok(Windows((1..=7).collect())));
        assert_eq!("2..=3".parse(), Ok(Windows(vec![2, 3])));
        assert_eq!("4".parse(), Ok(Windows(vec![4])));
        assert_eq!("1,3..4, 7".parse(), Ok(Windows(vec![1, 3, 4, 7])));
    }

    #[test]
    fn errors_say_what_is_wrong() {
        assert_eq!(
            "0..7".parse::<Windows>(),
            Err("window 0 is out of range: 1-127".into())
        );
        assert_eq!(
            "7..1".parse::<Windows>(),
            Err("window range \"7..1\" runs backwards".into())
        );
        assert!("x"
            .parse::<Windows>()
            .unwrap_err()
            .contains("not a window list"));
    }
}
