//! Reed-Solomon erasure code over GF(2^8), FEC Encoding ID 5 (RFC 5510
//! section 5, with the field of section 7.1 and the generator matrix of
//! section 8).
//!
//! The field is GF(2^8) built on the primitive polynomial
//! x^8 + x^4 + x^3 + x^2 + 1 (0x11D), α = x. For k source and p parity
//! symbols the n × k Vandermonde matrix has a first row (1, 0, …, 0) and
//! rows r = 1 … n−1 of (α^((r−1)·j)) for columns j = 0 … k−1; multiplying it
//! on the right by the inverse of its top k × k square gives the
//! systematic generator matrix, whose rows k … n−1 produce the parity
//! symbols. This is the construction libnorm uses (Rizzo's code), checked
//! byte for byte against it in the tests and over the air in
//! `interop/linklab-norm.sh`.
//!
//! A NORM sender configures k (the maximum source block length) once; a
//! shorter block (the last of an object, RFC 5740 section 5.1.1) is coded
//! as if its missing source symbols were zero, and its parity symbols
//! take the ESIs right after its own source symbols.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use thiserror::Error;

/// Why a code or a decoding is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FecError {
    /// k + p exceeds 255, or k is zero.
    #[error("Reed-Solomon over GF(2^8) needs 1 ≤ k and k + p ≤ 255 (k {k}, p {p})")]
    BadParameters {
        /// Source symbols per block.
        k: usize,
        /// Parity symbols per block.
        p: usize,
    },
    /// Fewer distinct symbols than the block has source symbols.
    #[error("{have} of {need} symbols: not decodable yet")]
    NotEnoughSymbols {
        /// Distinct usable symbols given.
        have: usize,
        /// Source symbols of the block.
        need: usize,
    },
}

struct Tables {
    exp: [u8; 510],
    log: [u8; 256],
    mul: Vec<[u8; 256]>,
}

fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| {
        let mut exp = [0u8; 510];
        let mut log = [0u8; 256];
        let mut x: u16 = 1;
        for i in 0..255 {
            exp[i] = x as u8;
            exp[i + 255] = x as u8;
            log[x as usize] = i as u8;
            x <<= 1;
            if x & 0x100 != 0 {
                x ^= 0x11d;
            }
        }
        let mut mul = vec![[0u8; 256]; 256];
        for (a, row) in mul.iter_mut().enumerate().skip(1) {
            for (b, out) in row.iter_mut().enumerate().skip(1) {
                *out = exp[usize::from(log[a]) + usize::from(log[b])];
            }
        }
        Tables { exp, log, mul }
    })
}

fn mul(a: u8, b: u8) -> u8 {
    tables().mul[usize::from(a)][usize::from(b)]
}

fn inv(a: u8) -> u8 {
    let t = tables();
    t.exp[(255 - usize::from(t.log[usize::from(a)])) % 255]
}

/// α^e.
fn alpha_pow(e: usize) -> u8 {
    tables().exp[e % 255]
}

/// `dst ^= c · src` over the common length.
fn add_mul(dst: &mut [u8], src: &[u8], c: u8) {
    if c == 0 {
        return;
    }
    let row = &tables().mul[usize::from(c)];
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= row[usize::from(*s)];
    }
}

/// Inverts a square matrix (row-major) by Gauss-Jordan elimination;
/// `None` if it is singular.
fn invert(mut m: Vec<u8>, n: usize) -> Option<Vec<u8>> {
    let mut r = vec![0u8; n * n];
    for i in 0..n {
        r[i * n + i] = 1;
    }
    for col in 0..n {
        let pivot = (col..n).find(|&row| m[row * n + col] != 0)?;
        if pivot != col {
            for j in 0..n {
                m.swap(pivot * n + j, col * n + j);
                r.swap(pivot * n + j, col * n + j);
            }
        }
        let f = inv(m[col * n + col]);
        for j in 0..n {
            m[col * n + j] = mul(m[col * n + j], f);
            r[col * n + j] = mul(r[col * n + j], f);
        }
        for row in 0..n {
            let c = m[row * n + col];
            if row != col && c != 0 {
                for j in 0..n {
                    let (mv, rv) = (m[col * n + j], r[col * n + j]);
                    m[row * n + j] ^= mul(c, mv);
                    r[row * n + j] ^= mul(c, rv);
                }
            }
        }
    }
    Some(r)
}

/// An RFC 5510 Reed-Solomon code with `k` source and `p` parity symbols
/// per block.
#[derive(Debug, Clone)]
pub struct Rs8 {
    k: usize,
    p: usize,
    /// Parity rows of the systematic generator matrix, p × k.
    parity_rows: Arc<[u8]>,
}

/// How many codes [`Rs8::new`] keeps for the process. A session's sender
/// and each of its receivers build the same code or two again and again,
/// and building one inverts a k × k matrix (about k³ field operations);
/// the bound keeps a peer that announces every (k, p) there is from
/// growing the memo.
const MEMO_CODES: usize = 16;

/// The memo's entries: (k, p) and the code's parity rows.
type Memo = Vec<((usize, usize), Arc<[u8]>)>;

/// The parity rows of the code for (k, p), from the memo or built and
/// kept there while it has room.
fn parity_rows(k: usize, p: usize) -> Result<Arc<[u8]>, FecError> {
    static MEMO: Mutex<Memo> = Mutex::new(Vec::new());
    let known = |memo: &Memo| {
        memo.iter()
            .find(|(kp, _)| *kp == (k, p))
            .map(|(_, rows)| Arc::clone(rows))
    };
    if let Some(rows) = known(&MEMO.lock().unwrap_or_else(PoisonError::into_inner)) {
        return Ok(rows);
    }
    let rows: Arc<[u8]> = build_parity_rows(k, p)?.into();
    let mut memo = MEMO.lock().unwrap_or_else(PoisonError::into_inner);
    if known(&memo).is_none() && memo.len() < MEMO_CODES {
        memo.push(((k, p), Arc::clone(&rows)));
    }
    Ok(rows)
}

/// Rows k … n−1 of the systematic generator matrix: the Vandermonde
/// matrix (RFC 5510 section 8.3), n × k, times the inverse of its top
/// k × k square.
fn build_parity_rows(k: usize, p: usize) -> Result<Vec<u8>, FecError> {
    let n = k + p;
    let mut v = vec![0u8; n * k];
    v[0] = 1;
    for row in 1..n {
        for col in 0..k {
            v[row * k + col] = alpha_pow((row - 1) * col);
        }
    }
    let top_inv = invert(v[..k * k].to_vec(), k).ok_or(FecError::BadParameters { k, p })?;
    let mut parity_rows = vec![0u8; p * k];
    for i in 0..p {
        for col in 0..k {
            let mut acc = 0u8;
            for j in 0..k {
                acc ^= mul(v[(k + i) * k + j], top_inv[j * k + col]);
            }
            parity_rows[i * k + col] = acc;
        }
    }
    Ok(parity_rows)
}

impl Rs8 {
    /// The code for `k` source and `p` parity symbols (k + p ≤ 255).
    pub fn new(k: usize, p: usize) -> Result<Rs8, FecError> {
        if k == 0 || k + p > 255 {
            return Err(FecError::BadParameters { k, p });
        }
        Ok(Rs8 {
            k,
            p,
            parity_rows: parity_rows(k, p)?,
        })
    }

    /// Source symbols per full block.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Parity symbols per block.
    pub fn p(&self) -> usize {
        self.p
    }

    /// Parity symbol `index` (0-based, `index < p`) of a block of
    /// `sources.len() ≤ k` source symbols, `len` octets long (shorter
    /// sources count as zero-padded).
    pub fn parity(&self, sources: &[&[u8]], index: usize, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        let row = &self.parity_rows[index * self.k..(index + 1) * self.k];
        for (src, &c) in sources.iter().zip(row) {
            add_mul(&mut out, src, c);
        }
        out
    }

    /// Recovers the source symbols of a block of `k_block ≤ k` source
    /// symbols from any `k_block` of its symbols, given as (ESI, octets):
    /// ESIs below `k_block` are source symbols, ESI `k_block + i` is parity
    /// symbol `i`. Every symbol is taken as zero-padded to `len`. Returns
    /// the `k_block` source symbols, each `len` long.
    pub fn decode(
        &self,
        k_block: usize,
        symbols: &[(usize, &[u8])],
        len: usize,
    ) -> Result<Vec<Vec<u8>>, FecError> {
        let kb = k_block.min(self.k);
        let mut sources: Vec<Option<Vec<u8>>> = vec![None; kb];
        let mut parity: Vec<(usize, &[u8])> = Vec::new();
        for &(esi, data) in symbols {
            if esi < kb {
                if sources[esi].is_none() {
                    let mut s = data[..data.len().min(len)].to_vec();
                    s.resize(len, 0);
                    sources[esi] = Some(s);
                }
            } else if esi - kb < self.p && !parity.iter().any(|&(i, _)| i == esi - kb) {
                parity.push((esi - kb, data));
            }
        }
        let missing: Vec<usize> = (0..kb).filter(|&j| sources[j].is_none()).collect();
        let have = kb - missing.len() + parity.len();
        if have < kb {
            return Err(FecError::NotEnoughSymbols { have, need: kb });
        }
        if !missing.is_empty() {
            parity.truncate(missing.len());
            // For each parity symbol used, subtract the known sources; what
            // remains is an m × m system in the missing sources.
            let m = missing.len();
            let mut a = vec![0u8; m * m];
            let mut rhs = Vec::with_capacity(m);
            for (r, &(i, data)) in parity.iter().enumerate() {
                let row = &self.parity_rows[i * self.k..i * self.k + kb];
                let mut y = data[..data.len().min(len)].to_vec();
                y.resize(len, 0);
                for (j, src) in sources.iter().enumerate() {
                    if let Some(s) = src {
                        add_mul(&mut y, s, row[j]);
                    }
                }
                for (c, &j) in missing.iter().enumerate() {
                    a[r * m + c] = row[j];
                }
                rhs.push(y);
            }
            // Any m rows of the parity part of an MDS code's generator are
            // independent on any m columns, so the inverse exists.
            let a_inv = invert(a, m).ok_or(FecError::NotEnoughSymbols { have, need: kb })?;
            for (c, &j) in missing.iter().enumerate() {
                let mut s = vec![0u8; len];
                for (r, y) in rhs.iter().enumerate() {
                    add_mul(&mut s, y, a_inv[c * m + r]);
                }
                sources[j] = Some(s);
            }
        }
        Ok(sources.into_iter().flatten().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_is_built_on_0x11d() {
        let t = tables();
        assert_eq!(t.exp[8], 0x1d);
        assert_eq!(mul(0x80, 2), 0x1d);
        for a in 1..=255u8 {
            assert_eq!(mul(a, inv(a)), 1);
        }
    }

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Parity symbols that Debian's libnorm 1.5.9 sent (captured on
    /// loopback with proactive parity) for a 50-octet object of octets
    /// (37·i + 11) mod 256 in 16-octet segments, k = 4, p = 2: one block of
    /// four source symbols, the last two octets long.
    #[test]
    fn parity_matches_libnorm_byte_for_byte() {
        let object: Vec<u8> = (0..50u32).map(|i| ((i * 37 + 11) % 256) as u8).collect();
        let sources: Vec<&[u8]> = object.chunks(16).collect();
        let code = Rs8::new(4, 2).unwrap();
        assert_eq!(
            code.parity(&sources, 0, 16),
            hex("796ff062253475e1a3bb4f2d2546ac90")
        );
        assert_eq!(
            code.parity(&sources, 1, 16),
            hex("e1285b307175765f9ed02e7bc2b2c95a")
        );
    }

    /// The memo hands out the rows a fresh build gives, for codes taken
    /// again and for more codes than it keeps.
    #[test]
    fn a_code_from_the_memo_is_the_code_built_anew() {
        for round in 0..2 {
            for k in 1..=(MEMO_CODES + 4) {
                let code = Rs8::new(k, 3).unwrap();
                assert_eq!(
                    &code.parity_rows[..],
                    &build_parity_rows(k, 3).unwrap()[..],
                    "k {k}, round {round}"
                );
            }
        }
    }

    #[test]
    fn parameters_are_checked() {
        assert!(Rs8::new(0, 4).is_err());
        assert!(Rs8::new(200, 56).is_err());
        assert!(Rs8::new(200, 55).is_ok());
    }

    #[test]
    fn any_k_of_n_symbols_recover_a_block() {
        let code = Rs8::new(8, 4).unwrap();
        for kb in [8, 5, 1] {
            let src: Vec<Vec<u8>> = (0..kb)
                .map(|i| (0..16).map(|j| (i * 31 + j * 7) as u8).collect())
                .collect();
            let refs: Vec<&[u8]> = src.iter().map(Vec::as_slice).collect();
            let par: Vec<Vec<u8>> = (0..4).map(|i| code.parity(&refs, i, 16)).collect();
            // Drop up to 4 sources, replace with parity.
            for drop in 0..=kb.min(4) {
                let mut symbols: Vec<(usize, &[u8])> = (drop..kb).map(|j| (j, refs[j])).collect();
                symbols.extend((0..drop).map(|i| (kb + 3 - i, par[3 - i].as_slice())));
                assert_eq!(
                    code.decode(kb, &symbols, 16).unwrap(),
                    src,
                    "kb {kb} drop {drop}"
                );
            }
            let short: Vec<(usize, &[u8])> = (1..kb).map(|j| (j, refs[j])).collect();
            assert!(code.decode(kb, &short, 16).is_err());
        }
    }
}
