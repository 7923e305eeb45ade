//! Assignments: a secret-looking value given to a secret-looking name (`password=…`,
//! `api_key: …`, `"client_secret": "…"`, `token "…"`, `DB_PASS=…`, `--password …`), and the
//! tests of "secret-looking" that the other shapes share: not a placeholder, not a name made of
//! words, not a path or a reference.

use super::rules::{Set, BASE64};
use super::scan::{run, Hit, RANK_ASSIGN};

pub(super) const PASSWORD: &str =
    "A password-like value assigned to a password field (password=, pwd:, …).";
pub(super) const SECRET: &str =
    "A random-looking value assigned to a secret field (token, secret, api_key, …).";
pub(super) const AWS_SECRET: &str =
    "An AWS secret access key (40 base64 characters assigned to a secret key field).";

/// The bytes an unquoted value is made of: ASCII graphic bytes but quotes, brackets, `,` `;`
/// `=` `|` `\` (which end a value in the languages and formats a summary quotes). `&` stays in:
/// a password's tail matters more than a query string's next parameter.
static VALUE: Set = Set::of("!#$%&*+./0-9:?@A-Z^_a-z~-");

/// What a name says its value is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Password,
    Secret,
    AwsSecret,
}

/// The names whose end (letters and digits only, lower case) says "password".
const PASSWORD_ENDS: &[&str] = &["password", "passwd", "passphrase"];
/// The names whose end says "secret".
const SECRET_ENDS: &[&str] = &[
    "secret",
    "token",
    "apikey",
    "accesskey",
    "secretkey",
    "privatekey",
    "signingkey",
    "encryptionkey",
    "masterkey",
    "authkey",
    "clientkey",
    "appkey",
    "servicekey",
    "webhookkey",
    "adminkey",
    "sessionkey",
    "hmackey",
    "licensekey",
    "credential",
    "credentials",
];

/// The end of the last run of [`VALUE`] bytes an unquoted value was read from: a value that
/// starts inside it ends where it ends, so a text of names and separators (`token:token:…`) is
/// read once, not once a name.
#[derive(Default)]
pub(super) struct Runs {
    value: std::ops::Range<usize>,
}

/// Whether what follows the word `b[start..end]` may follow a name: a separator, a quote, or
/// spaces then one of those (or anything, after a `--flag`). Most words of prose fail here.
#[inline]
pub(super) fn may_assign(b: &[u8], start: usize, end: usize) -> bool {
    // The last letter of every name `class_of` takes: passworD, passphrasE, credentialS, pW,
    // secreT, tokeN, api_keY, credentiaL, autH.
    let last = b[end - 1].to_ascii_lowercase();
    if end - start < 2
        || !matches!(
            last,
            b'd' | b'e' | b's' | b'w' | b't' | b'n' | b'y' | b'l' | b'h'
        )
    {
        return false;
    }
    match b.get(end) {
        Some(b'=' | b':' | b'"' | b'\'' | b'`' | b'\\') => true,
        Some(b' ' | b'\t') => {
            b[start..].starts_with(b"--")
                || b[end..]
                    .iter()
                    .take(9)
                    .find(|c| !matches!(c, b' ' | b'\t'))
                    .is_some_and(|c| matches!(c, b'=' | b':' | b'"' | b'\'' | b'`' | b'\\'))
        }
        _ => false,
    }
}

/// The value assigned to the name that is the word `b[start..end]`, when the name is a secret
/// name and the value looks like a secret.
pub(super) fn assignment(b: &[u8], start: usize, end: usize, runs: &mut Runs) -> Option<Hit> {
    // `$PASSWORD`, `${PASSWORD:-default}`: a reference to the name, not an assignment to it.
    if start > 0 && matches!(b[start - 1], b'$' | b'{') {
        return None;
    }
    let from = separated(b, start, end)?;
    let class = class_of(&b[start..end])?;
    let (value, far) = value_at(b, from, runs)?;
    let (kind, why) = judged(&b[value.clone()], class)?;
    Some(Hit {
        at: value,
        seen: start.saturating_sub(1)..far.min(b.len()),
        kind,
        why,
        rank: RANK_ASSIGN,
    })
}

/// What a name says its value is, if it names a secret: by its end with separators dropped
/// (`client_secret`, `PGPASSWORD`, `apiKey`, `x-api-key`), or by its last part (`DB_PASS`,
/// `smtpPwd`, `basic_auth`; a bare `PASS` is a test runner's word, not a field).
fn class_of(name: &[u8]) -> Option<Class> {
    if name.len() > 64 {
        return None;
    }
    let mut buf = [0u8; 64];
    let mut n = 0;
    for &c in name.iter().filter(|c| c.is_ascii_alphanumeric()) {
        buf[n] = c.to_ascii_lowercase();
        n += 1;
    }
    let norm = &buf[..n];
    let ends = |s: &&str| norm.ends_with(s.as_bytes());
    let last = last_part(name);
    let last_is = |p: &&str| last.eq_ignore_ascii_case(p.as_bytes());
    if norm.ends_with(b"secretaccesskey")
        || norm.ends_with(b"secretkey") && norm.windows(3).any(|w| w == b"aws")
    {
        Some(Class::AwsSecret)
    } else if PASSWORD_ENDS.iter().any(ends)
        || last.len() < norm.len() && ["pass", "pwd", "pw"].iter().any(last_is)
    {
        Some(Class::Password)
    } else if SECRET_ENDS.iter().any(ends) || last_is(&"auth") {
        Some(Class::Secret)
    } else {
        None
    }
}

/// A name's last part: after its last `_`, `-` or `.`, or its last lower-to-upper change
/// (`dbPass` → `Pass`).
fn last_part(name: &[u8]) -> &[u8] {
    let end = name
        .iter()
        .rposition(u8::is_ascii_alphanumeric)
        .map_or(0, |e| e + 1);
    let mut start = end;
    while start > 0 && name[start - 1].is_ascii_alphanumeric() {
        if start < end && name[start - 1].is_ascii_lowercase() && name[start].is_ascii_uppercase() {
            break;
        }
        start -= 1;
    }
    &name[start..end]
}

fn is_quote(c: u8) -> bool {
    matches!(c, b'"' | b'\'' | b'`')
}

/// Where the value after the name `b[start..end]` starts: after the name's closing quote if
/// any, spaces, a separator (`=`, `:`, `:=`, `=>`; none before a quoted value or after a
/// `--flag`) and spaces. Most words of prose fail at the first byte or two.
fn separated(b: &[u8], start: usize, end: usize) -> Option<usize> {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let quote_at = |k: usize| is_quote(at(k)) || at(k) == b'\\' && is_quote(at(k + 1));
    let spaces = |k: usize| {
        b[k.min(b.len())..]
            .iter()
            .take(8)
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count()
    };
    let mut j = end;
    if quote_at(j) {
        j += if at(j) == b'\\' { 2 } else { 1 };
    }
    let before = spaces(j);
    j += before;
    let sep = match (at(j), at(j + 1)) {
        (b':', b'=') | (b'=', b'>') => 2,
        (b'=', c) if c != b'=' => 1,
        (b':', c) if c != b':' => 1,
        _ if before > 0 && (quote_at(j) || b[start..].starts_with(b"--")) => 0,
        _ => return None,
    };
    j += sep;
    Some(j + spaces(j))
}

/// The value that starts at `j` and the end of what was read: a quoted value (one line, 256
/// bytes at most; `\"` counts as a quote) or a run of [`VALUE`] bytes (with its `=` padding,
/// without a period or colon that ends a sentence).
fn value_at(b: &[u8], mut j: usize, runs: &mut Runs) -> Option<(std::ops::Range<usize>, usize)> {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    if at(j) == b'\\' && is_quote(at(j + 1)) {
        j += 1;
    }
    if is_quote(at(j)) {
        let q = at(j);
        let from = j + 1;
        let window = &b[from.min(b.len())..(from + 257).min(b.len())];
        let close = from + window.iter().position(|&c| c == q || c == b'\n')?;
        if b[close] != q {
            return None;
        }
        let v_end = if close > from && b[close - 1] == b'\\' {
            close - 1
        } else {
            close
        };
        return Some((from..v_end, close + 1));
    }
    if !runs.value.contains(&j) {
        runs.value = j..run(b, j, &VALUE, usize::MAX);
    }
    let e = runs.value.end;
    // Longer than any secret; or code: a call or an index (`token = make_token(…)`,
    // `secret = os.environ[…]`).
    if e - j > 256 || matches!(b.get(e), Some(b'(' | b'[')) {
        return None;
    }
    // `=` after the run is base64 padding, unless a value follows it (`a=b&c=d`): then the
    // run's tail from its last `&` is the next parameter's name.
    let eqs = b[e..].iter().take(3).take_while(|&&c| c == b'=').count();
    let far = e + eqs + 1;
    let assigns_next = eqs > 0 && b.get(e + eqs).is_some_and(|&c| VALUE.has(c));
    let mut v_end = e + if assigns_next { 0 } else { eqs };
    if assigns_next {
        if let Some(amp) = b[j..e].iter().rposition(|&c| c == b'&') {
            v_end = j + amp;
        }
    }
    if v_end == e {
        while v_end > j && matches!(b[v_end - 1], b'.' | b':') {
            v_end -= 1;
        }
    }
    Some((j..v_end, far))
}

/// The kind of a value given to a name of `class`, if it looks like a secret: no spaces or
/// controls, not a placeholder or reference, a letter in it and not a timestamp; a password of
/// 8 bytes or more with a digit or a symbol, not words joined (`reset_flow_v2`); any other secret
/// of 12 bytes or more with a digit (or base64 symbols, from 20 bytes), not a name, of six
/// different bytes or more.
fn judged(v: &[u8], class: Class) -> Option<(&'static str, &'static str)> {
    let min = if class == Class::Password { 8 } else { 12 };
    if v.len() < min || v.len() > 256 || !v.iter().all(u8::is_ascii_graphic) {
        return None;
    }
    if placeholder(v) || reference(v) {
        return None;
    }
    let letters = v.iter().filter(|c| c.is_ascii_alphabetic()).count();
    let digits = v.iter().filter(|c| c.is_ascii_digit()).count();
    // Symbols a name is not made of (`_`, `-` and `.` join words).
    let symbols = v
        .iter()
        .filter(|c| !c.is_ascii_alphanumeric() && !matches!(c, b'_' | b'-' | b'.'))
        .count();
    if letters == 0
        || v.iter()
            .all(|c| !c.is_ascii_alphabetic() || matches!(c, b'T' | b'Z'))
    {
        return None;
    }
    if class == Class::AwsSecret && v.len() == 40 && digits > 0 && v.iter().all(|&c| BASE64.has(c))
    {
        return Some(("aws-secret-access-key", AWS_SECRET));
    }
    if class == Class::Password {
        return (digits + symbols > 0 && !identifier(v, 2)).then_some(("password", PASSWORD));
    }
    let base64ish = v.len() >= 20 && v.iter().any(|c| matches!(c, b'+' | b'/' | b'='));
    ((digits > 0 || base64ish) && !identifier(v, 1) && distinct(v) >= 6)
        .then_some(("secret", SECRET))
}

/// Whether `v` is a name rather than a secret: [`name_like`] as a whole (`accessTokenV2`), or
/// made of parts (split at `_ . - : /`) of which those that read as words hold half its bytes
/// or more (`D3DKMT_PRESENTHISTORYTOKEN_0`, `MI_UserCredentials_0`, `test-m2m-secret`): the
/// type names and constants code gives a field, and made-up fixture values.
fn identifier(v: &[u8], min_words: usize) -> bool {
    if name_like(v, min_words) {
        return true;
    }
    let parts = || v.split(|c| matches!(c, b'_' | b'.' | b'-' | b':' | b'/'));
    let wordy: usize = parts()
        .filter(|p| p.len() >= 3 && name_like(p, 1))
        .map(<[u8]>::len)
        .sum();
    parts().count() >= 2 && 2 * wordy >= v.len()
}

/// Whether `v` stands for a value rather than being one: `<…>`, `{…}`, `${…}`, `$(…)`, `%…%`,
/// `$NAME`, one byte repeated, or holding `***`, `xxxx`, `...` or a word documentation uses
/// (`example`, `placeholder`, `changeme`, `your_`, `dummy`, …).
pub(super) fn placeholder(v: &[u8]) -> bool {
    let Some((&first, rest)) = v.split_first() else {
        return true;
    };
    matches!(first, b'<' | b'{' | b'%')
        || v.last().is_some_and(|c| matches!(c, b'>' | b'}'))
        || first == b'$'
            && (rest.first().is_some_and(|c| matches!(c, b'{' | b'('))
                || rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_'))
        || v.iter().all(|&c| c == first)
        || (0..v.len()).any(|k| placeholder_word(&v[k..]))
}

/// Whether `v` starts with one of the words documentation puts in place of a secret (any
/// case); one `match` on the first byte, so a value is read once.
fn placeholder_word(v: &[u8]) -> bool {
    let words: &[&str] = match v[0].to_ascii_lowercase() {
        b'*' => &["***"],
        b'.' => &["..."],
        b'x' => &["xxxx"],
        b'e' => &["example"],
        b'p' => &["placeholder"],
        b'c' => &["changeme", "change_me", "change-me"],
        b'r' => &["replace_me", "replaceme", "redacted"],
        b'y' => &[
            "your_",
            "your-",
            "yourpass",
            "yourtoken",
            "yoursecret",
            "yourkey",
        ],
        b'd' => &["dummy"],
        b's' => &["sample"],
        b'f' => &["fake"],
        b'n' => &["notreal", "not_real"],
        _ => return false,
    };
    words.iter().any(|w| {
        v.get(..w.len())
            .is_some_and(|x| x.eq_ignore_ascii_case(w.as_bytes()))
    })
}

/// Whether `v` names where a value is rather than holding it: a path, a URL, or code (a
/// `&reference` or a `path::to::item`).
fn reference(v: &[u8]) -> bool {
    matches!(v.first(), Some(b'/' | b'~' | b'&'))
        || v.starts_with(b"./")
        || v.starts_with(b"../")
        || v.windows(3).any(|w| w == b"://")
        || v.windows(2).any(|w| w == b"::")
}

/// Whether `v` reads as words joined into a name (`accessTokenV2`, `reset_flow_v2`,
/// `HTTPServer`, `process.env.API_KEY`): split at `_ - . / :` and at case and digit changes,
/// every part is a word (three letters or more, or a common two-letter one), a number of at
/// most four digits, or one letter before a number (`v2`; `X509` where a part starts); and at
/// least `min_words` parts are words.
/// Random text almost always has a part of one or two letters, a longer number or a symbol.
pub(super) fn name_like(v: &[u8], min_words: usize) -> bool {
    let mut words = 0;
    let mut i = 0;
    while i < v.len() {
        let c = v[i];
        if matches!(c, b'_' | b'-' | b'.' | b'/' | b':') {
            i += 1;
        } else if c.is_ascii_digit() {
            let e = i + v[i..].iter().take_while(|c| c.is_ascii_digit()).count();
            if e - i > 4 {
                return false;
            }
            i = e;
        } else if c.is_ascii_alphabetic() {
            let e = word_end(v, i);
            // One letter before a number: a version (`v2`), or a model where a part starts
            // (`X509Request`, `D3DKMT`); anywhere else, hex (`d0634a0b…`) reads that way too.
            let part_start = i == 0 || matches!(v[i - 1], b'_' | b'-' | b'.' | b'/' | b':');
            let version = e - i == 1
                && v.get(e).is_some_and(u8::is_ascii_digit)
                && (part_start || matches!(c, b'v' | b'V'));
            let short = e - i == 2 && SHORT_WORDS.iter().any(|w| v[i..e].eq_ignore_ascii_case(w));
            if e - i < 3 && !version && !short {
                return false;
            }
            words += usize::from(!version);
            i = e;
        } else {
            return false;
        }
    }
    words >= min_words
}

/// The words of two letters a name is made of as often as of longer ones (`same-as-before`,
/// `user_id`, `notes.md`).
const SHORT_WORDS: &[&[u8]] = &[
    b"as", b"at", b"be", b"by", b"db", b"do", b"go", b"id", b"if", b"in", b"io", b"is", b"it",
    b"js", b"md", b"me", b"my", b"no", b"of", b"ok", b"on", b"or", b"os", b"py", b"rs", b"sh",
    b"so", b"to", b"ts", b"ui", b"up", b"us", b"we",
];

/// The end of the word starting at `i`: lower case letters, a capital and lower case letters,
/// or capitals (the last of which starts the next word when lower case follows: `HTTPServer`).
fn word_end(v: &[u8], i: usize) -> usize {
    let lower_from = |k: usize| k + v[k..].iter().take_while(|c| c.is_ascii_lowercase()).count();
    if v[i].is_ascii_lowercase() {
        return lower_from(i);
    }
    let caps = v[i..].iter().take_while(|c| c.is_ascii_uppercase()).count();
    match (caps, v.get(i + caps).is_some_and(u8::is_ascii_lowercase)) {
        (1, _) => lower_from(i + 1),
        (_, true) => i + caps - 1,
        _ => i + caps,
    }
}

/// How many different bytes `v` (ASCII) holds.
fn distinct(v: &[u8]) -> u32 {
    v.iter()
        .fold(0u128, |seen, &c| seen | 1u128 << (c & 0x7f))
        .count_ones()
}
