//! The credentials known by their shape rather than a prefix: private key blocks, signed JWTs,
//! the password of a URL, `Authorization: Bearer`/`Basic` values and Azure client secrets;
//! and the small decoders their tests need (base64, a Discord token's user id).

use memchr::memmem;

use super::assign::{name_like, placeholder};
use super::rules::{Set, BASE64, WORD};
use super::scan::{finder, run, Hit, RANK_AUTH, RANK_JWT, RANK_PEM, RANK_URL};
use std::sync::OnceLock;

pub(super) const PRIVATE_KEY: &str = "A private key block (-----BEGIN … PRIVATE KEY-----).";
pub(super) const JWT: &str =
    "A signed JSON Web Token (three base64url parts, a header naming its \"alg\").";
pub(super) const URL_PASSWORD: &str = "The password of a URL (scheme://user:PASSWORD@host).";
pub(super) const BEARER: &str = "A bearer token (Authorization: Bearer …).";
pub(super) const BASIC: &str =
    "HTTP basic credentials (Authorization: Basic and base64 of user:password).";
pub(super) const AZURE: &str =
    "An Azure (Entra ID) client secret (a digit and Q~ at its fifth byte).";

/// What a base64 value of these shapes may hold beyond `BASE64`: RFC 6750's `b64token`.
static B64TOKEN: Set = Set::of("A-Za-z0-9._~+/-");
/// An Azure client secret's bytes.
static AZURE_SET: Set = Set::of("A-Za-z0-9_~.-");
/// The bytes a URL scheme is made of.
static SCHEME: Set = Set::of("A-Za-z0-9+.-");

/// Private key blocks: from `-----BEGIN … PRIVATE KEY-----` (the label ends `PRIVATE KEY` or,
/// for PGP, `PRIVATE KEY BLOCK`) through the next `-----END …-----`, or to the end of the text
/// when none follows (a cut text). A header not followed by key material is a mention, not a
/// key.
pub(super) fn private_keys(b: &[u8], found: &mut Vec<Hit>) {
    static BEGIN: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    static END: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    // The first END at or after some earlier place: still right while it lies ahead.
    let mut next_end: Option<Option<usize>> = None;
    for p in finder(&BEGIN, "-----BEGIN ").find_iter(b) {
        let label = p + "-----BEGIN ".len();
        let label_end = label + label_len(&b[label..]);
        let name = &b[label..label_end];
        if !(name.ends_with(b"PRIVATE KEY") || name.ends_with(b"PRIVATE KEY BLOCK"))
            || !b[label_end..].starts_with(b"-----")
        {
            continue;
        }
        let body = label_end + 5;
        let end = match next_end {
            Some(Some(e)) if e >= body => Some(e),
            Some(None) => None,
            _ => finder(&END, "-----END ").find(&b[body..]).map(|e| body + e),
        };
        next_end = Some(end);
        let Some(material_end) = key_material(b, body, end.unwrap_or(b.len())) else {
            continue;
        };
        let (stop, far) = match end {
            Some(e) => {
                let l = e + "-----END ".len();
                let l_end = l + label_len(&b[l..]);
                let stop = match b[l_end..].starts_with(b"-----") {
                    true => l_end + 5,
                    false => l_end,
                };
                (stop, stop.max(l_end + 1).min(b.len()))
            }
            None => (b.len(), b.len()),
        };
        found.push(Hit {
            at: p..stop,
            seen: p..far.max(material_end).min(b.len()),
            kind: "private-key",
            why: PRIVATE_KEY,
            rank: RANK_PEM,
        });
    }
}

/// The length of a PEM label (upper case letters, digits and spaces, at most 60).
fn label_len(b: &[u8]) -> usize {
    b.iter()
        .take(60)
        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b' ')
        .count()
}

/// Whether a block's body, from `body` (and before `limit`, its END), starts with key
/// material: after blanks (spaces, line breaks, or `\n`-style escapes in a quoted string) and
/// up to four `Name: value` header lines (`Proc-Type:`, `DEK-Info:`, PGP's `Version:`), 32
/// base64 bytes in a row. Returns the end of what was read. A header named in prose is
/// followed by words, not by key material.
fn key_material(b: &[u8], body: usize, limit: usize) -> Option<usize> {
    let limit = limit.min(b.len());
    let mut k = blanks_end(b, body, limit);
    for _ in 0..4 {
        let rest = &b[k..limit];
        let name = rest
            .iter()
            .take(32)
            .take_while(|c| c.is_ascii_alphabetic() || **c == b'-')
            .count();
        if name == 0 || rest.get(name) != Some(&b':') {
            break;
        }
        let line = rest
            .iter()
            .take(128)
            .position(|&c| c == b'\n' || c == b'\\')?;
        k = blanks_end(b, k + line, limit);
    }
    let run = b[k..limit]
        .iter()
        .take(32)
        .take_while(|&&c| BASE64.has(c) || c == b'=')
        .count();
    (run == 32).then_some(k + 33)
}

/// The end of the blanks from `k`: ASCII whitespace and the escapes `\n`, `\r`, `\t`.
fn blanks_end(b: &[u8], mut k: usize, limit: usize) -> usize {
    while k < limit {
        if b[k].is_ascii_whitespace() {
            k += 1;
        } else if b[k] == b'\\' && k + 1 < limit && matches!(b[k + 1], b'n' | b'r' | b't') {
            k += 2;
        } else {
            break;
        }
    }
    k
}

/// A signed JWT starting at the word start `i` (its first part ends at `end`): three base64url
/// parts, the first decoding to a JSON object with an `"alg"`, the last (the signature) of 16
/// bytes or more. An unsigned token (no signature) is not a credential.
pub(super) fn jwt(b: &[u8], i: usize, end: usize) -> Option<Hit> {
    if !b[i..].starts_with(b"eyJ") || b.get(end) != Some(&b'.') || i > 0 && b[i - 1] == b'.' {
        return None;
    }
    if !(10..=2048).contains(&(end - i)) {
        return None;
    }
    let payload = end + 1;
    let payload_end = run(b, payload, &WORD, 16384);
    if !(2..=16384).contains(&(payload_end - payload)) || b.get(payload_end) != Some(&b'.') {
        return None;
    }
    let sig = payload_end + 1;
    let sig_end = run(b, sig, &WORD, 4096);
    if !(16..=4096).contains(&(sig_end - sig)) {
        return None;
    }
    // A fourth part would make it something else; a period that ends a sentence does not.
    let mut far = sig_end + 1;
    if b.get(sig_end) == Some(&b'.') {
        if b.get(sig_end + 1).is_some_and(|&c| WORD.has(c)) {
            return None;
        }
        far = sig_end + 2;
    }
    let header = base64_decode(&b[i..end])?;
    let header = header.trim_ascii_start();
    if !header.starts_with(b"{") || memmem::find(header, b"\"alg\"").is_none() {
        return None;
    }
    Some(Hit {
        at: i..sig_end,
        seen: i.saturating_sub(1)..far.min(b.len()),
        kind: "jwt",
        why: JWT,
        rank: RANK_JWT,
    })
}

/// The password of each `scheme://user:password@host` (the user may be empty); scheme, user
/// and host stay. A placeholder (`<password>`, `${PASS}`, `****`, the word `password`) is not
/// a password, nor is one of fewer than 4 bytes (`abc:xyz` in an example), one that repeats
/// the user (`guest:guest`, `postgres:postgres`: a tool's documented default), or CVS's
/// `:pserver:user` method.
pub(super) fn url_passwords(b: &[u8], found: &mut Vec<Hit>) {
    static SEPARATOR: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    for k in finder(&SEPARATOR, "://").find_iter(b) {
        let mut s = k;
        while s > 0 && k - s <= 32 && SCHEME.has(b[s - 1]) {
            s -= 1;
        }
        if s == k || k - s > 32 || !b[s].is_ascii_alphabetic() {
            continue;
        }
        let from = k + 3;
        let (mut j, mut at) = (from, None);
        while j < b.len() && j - from <= 256 && !ends_authority(b[j]) {
            if b[j] == b'@' {
                at = Some(j);
            }
            j += 1;
        }
        let Some(at) = at else { continue };
        if j - from > 256
            || !b
                .get(at + 1)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'[')
        {
            continue;
        }
        let Some(colon) = memchr::memchr(b':', &b[from..at]).map(|c| from + c) else {
            continue;
        };
        let (user, password) = (&b[from..colon], &b[colon + 1..at]);
        // `cvs://:pserver:user@host` names a method, not a password.
        let method = user.is_empty() && password.contains(&b':');
        if password.len() < 4
            || method
            || placeholder(password)
            || url_placeholder(password)
            || password.eq_ignore_ascii_case(user)
        {
            continue;
        }
        found.push(Hit {
            at: colon + 1..at,
            seen: s.saturating_sub(1)..(j + 1).min(b.len()),
            kind: "url-password",
            why: URL_PASSWORD,
            rank: RANK_URL,
        });
    }
}

/// The bytes that end a URL's authority (and so its user and password).
fn ends_authority(c: u8) -> bool {
    !c.is_ascii_graphic()
        || matches!(
            c,
            b'/' | b'?'
                | b'#'
                | b'"'
                | b'\''
                | b'`'
                | b'<'
                | b'>'
                | b'['
                | b']'
                | b'('
                | b')'
                | b'{'
                | b'}'
                | b'\\'
                | b'|'
        )
}

/// The words documentation puts where a URL's password goes.
fn url_placeholder(p: &[u8]) -> bool {
    const WORDS: &[&str] = &[
        "password",
        "passwd",
        "pass",
        "pw",
        "pwd",
        "secret",
        "token",
        "x-oauth-basic",
    ];
    WORDS.iter().any(|w| p.eq_ignore_ascii_case(w.as_bytes()))
}

/// `Bearer TOKEN` and `Basic BASE64` (either case) at the word start `i` (the scheme's word
/// ends at `end`); the scheme stays, the credential is masked. A bearer value must look random
/// (20 bytes or more, letters and digits, not a name); a basic value must decode to printable
/// `user:password`.
pub(super) fn auth_scheme(b: &[u8], i: usize, end: usize) -> Option<Hit> {
    let scheme = &b[i..end];
    let bearer = scheme.eq_ignore_ascii_case(b"bearer");
    if !(bearer || scheme.eq_ignore_ascii_case(b"basic")) || b.get(end) != Some(&b' ') {
        return None;
    }
    let v = end + 1;
    let set = if bearer { &B64TOKEN } else { &BASE64 };
    let mut e = run(b, v, set, 4096);
    if e - v > 4096 {
        return None;
    }
    let pad = b[e..].iter().take(3).take_while(|&&c| c == b'=').count();
    let far = e + pad + 1;
    e += pad;
    if b.get(e).is_some_and(|&c| WORD.has(c)) {
        return None;
    }
    while e > v && b[e - 1] == b'.' {
        e -= 1;
    }
    let value = &b[v..e];
    let (kind, why) = match bearer {
        true if random(value, 20) => ("bearer-token", BEARER),
        false if basic_credentials(value) => ("basic-auth", BASIC),
        _ => return None,
    };
    Some(Hit {
        at: v..e,
        seen: i.saturating_sub(1)..far.min(b.len()),
        kind,
        why,
        rank: RANK_AUTH,
    })
}

/// Whether `v` is at least `min` bytes of letters and digits (and token symbols) that do not
/// read as a name or a placeholder.
fn random(v: &[u8], min: usize) -> bool {
    v.len() >= min
        && v.iter().any(u8::is_ascii_alphabetic)
        && v.iter().any(u8::is_ascii_digit)
        && !name_like(v, 1)
        && !placeholder(v)
}

/// Whether a `Basic` value decodes to printable `user:password` with a password.
fn basic_credentials(v: &[u8]) -> bool {
    if v.len() < 8 {
        return false;
    }
    let Some(plain) = base64_decode(v) else {
        return false;
    };
    plain.iter().all(|c| (0x20..0x7f).contains(c))
        && memchr::memchr(b':', &plain).is_some_and(|c| c + 1 < plain.len())
}

/// An Azure client secret at the word start `i`: three bytes, a digit, `Q~`, then 31 to 34
/// bytes of letters, digits, `_`, `~`, `.` and `-`, mixing letters and digits.
pub(super) fn azure_secret(b: &[u8], i: usize) -> Option<Hit> {
    let head = b.get(i..i + 6)?;
    if !(head[3].is_ascii_digit() && head[4] == b'Q' && head[5] == b'~') {
        return None;
    }
    if !head[..3].iter().all(|&c| AZURE_SET.has(c) && c != b'-')
        || i > 0 && matches!(b[i - 1], b'~' | b'.')
    {
        return None;
    }
    let tail = i + 6;
    let mut e = run(b, tail, &AZURE_SET, 42);
    let far = e + 1;
    if e - tail > 42 {
        return None;
    }
    while e > tail && b[e - 1] == b'.' {
        e -= 1;
    }
    let body = &b[tail..e];
    if !(31..=34).contains(&body.len())
        || !body.iter().any(u8::is_ascii_alphabetic)
        || !body.iter().any(u8::is_ascii_digit)
        || filler(body)
    {
        return None;
    }
    Some(Hit {
        at: i..e,
        seen: i.saturating_sub(1)..far.min(b.len()),
        kind: "azure-client-secret",
        why: AZURE,
        rank: RANK_AUTH,
    })
}

/// Whether a Discord token's first part (before its first `.`) is a user id in base64: 17 to
/// 20 decimal digits.
pub(super) fn discord_user_id(token: &[u8]) -> bool {
    let first = token.split(|&c| c == b'.').next().unwrap_or_default();
    base64_decode(first)
        .is_some_and(|id| (17..=20).contains(&id.len()) && id.iter().all(u8::is_ascii_digit))
}

/// Whether a token's body is a placeholder made of filler: six `x`, `X` or `*` in a row, or
/// ten of any one byte.
pub(super) fn filler(body: &[u8]) -> bool {
    let mut run = 0;
    for (k, &c) in body.iter().enumerate() {
        run = match k > 0 && body[k - 1] == c {
            true => run + 1,
            false => 1,
        };
        if run >= 10 || run >= 6 && matches!(c, b'x' | b'X' | b'*') {
            return true;
        }
    }
    false
}

/// Base64 (standard or URL-safe alphabet, padded or not) decoded; `None` when `s` holds any
/// other byte or cannot be base64.
pub(super) fn base64_decode(s: &[u8]) -> Option<Vec<u8>> {
    let s = s.strip_suffix(b"==").or(s.strip_suffix(b"=")).unwrap_or(s);
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 2);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}
