//! Secrets never settle in the record (issue 35, DESIGN invariant 12, `spec/secrets.md`): the
//! scanner that finds credentials in a text a capture is about to store and masks each as
//! `[redacted:KIND]`. Pure and bounded: no I/O, linear in the text, about ten microseconds of
//! CPU on a 2,000-character summary and 6 ms on a MiB of notes on a shared 2-core VM
//! (`benches/secrets.rs`, which is why the module is public). Capture, the MCP server and the
//! journal call [`mask`] on each text they store; a cited note's bytes go to [`find`].
//!
//! High precision over recall: a format is masked when its shape leaves little doubt (a vendor
//! prefix and charset, a private key block with key material, a JWT whose header decodes, a
//! URL's password, a random-looking value given to a secret's name); prose about passwords,
//! hashes, ids and placeholders is left as written. The formats and their sources are in
//! `rules.rs` (by prefix), `shapes.rs` and `assign.rs`.
//!
//! Masking is idempotent (a masked text masks to itself: a mark is never read as part of a
//! new match, `scan.rs` says why), marks never nest, and every masked span begins and ends at
//! an ASCII byte (or the text's end), so a masked `str` stays valid UTF-8 with every character
//! outside the marks untouched.

use std::borrow::Cow;
use std::ops::Range;

mod assign;
mod rules;
mod scan;
mod shapes;
#[cfg(test)]
mod tests;

/// How every mark begins: `[redacted:KIND]`.
pub const MARK_OPEN: &str = "[redacted:";

/// One credential found: its kind (the mark's `KIND`), one sentence naming its format (never
/// the secret), and the bytes of the scanned text it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: &'static str,
    pub why: &'static str,
    pub at: Range<usize>,
}

/// A text with its credentials masked, and what was masked (in order of place; `at` is in the
/// text as it was given). Borrowed when nothing was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Masked<'a> {
    pub text: Cow<'a, str>,
    pub found: Vec<Found>,
}

impl Masked<'_> {
    /// Whether nothing was masked.
    pub fn is_clean(&self) -> bool {
        self.found.is_empty()
    }

    /// The kinds masked, each once, sorted: what an entry records of its masking.
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds: Vec<_> = self.found.iter().map(|f| f.kind).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds
    }
}

/// `text` with every credential replaced by `[redacted:KIND]`. A URL keeps its scheme, user
/// and host (only the password is masked), a webhook its host and path, an `Authorization`
/// value its scheme, an assignment its name: only the secret itself becomes the mark.
pub fn mask(text: &str) -> Masked<'_> {
    let b = text.as_bytes();
    let hits = scan::hits(b);
    if hits.is_empty() {
        return Masked {
            text: Cow::Borrowed(text),
            found: Vec::new(),
        };
    }
    let mut out = Vec::with_capacity(text.len() + 24 * hits.len());
    let mut last = 0;
    for h in &hits {
        out.extend_from_slice(&b[last..h.at.start]);
        out.extend_from_slice(MARK_OPEN.as_bytes());
        out.extend_from_slice(h.kind.as_bytes());
        out.push(b']');
        last = h.at.end;
    }
    out.extend_from_slice(&b[last..]);
    // Every hit starts and ends at an ASCII byte or the text's end, so this never falls back.
    let masked = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Masked {
        text: Cow::Owned(masked),
        found: hits.into_iter().map(found).collect(),
    }
}

/// The credentials in `bytes` (a note's, which may be any bytes), as [`mask`] would mask them.
pub fn find(bytes: &[u8]) -> Vec<Found> {
    scan::hits(bytes).into_iter().map(found).collect()
}

/// The mark of a kind: `[redacted:KIND]`.
pub fn mark(kind: &str) -> String {
    format!("{MARK_OPEN}{kind}]")
}

fn found(h: scan::Hit) -> Found {
    Found {
        kind: h.kind,
        why: h.why,
        at: h.at,
    }
}

/// One format the scanner masks: its kind, the sentence shown, and where it is described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    pub kind: &'static str,
    pub why: &'static str,
    pub source: &'static str,
}

/// The formats known by their shape rather than a prefix (`shapes.rs`, `assign.rs`).
const SHAPES: &[Format] = &[
    Format {
        kind: "private-key",
        why: shapes::PRIVATE_KEY,
        source: "RFC 7468 (PEM labels), RFC 4880 (PGP armor); gitleaks private-key",
    },
    Format {
        kind: "jwt",
        why: shapes::JWT,
        source: "RFC 7519 and RFC 7515 (JWS compact form); gitleaks jwt",
    },
    Format {
        kind: "url-password",
        why: shapes::URL_PASSWORD,
        source: "RFC 3986 section 3.2.1 (userinfo)",
    },
    Format {
        kind: "bearer-token",
        why: shapes::BEARER,
        source: "RFC 6750 section 2.1 (b64token)",
    },
    Format {
        kind: "basic-auth",
        why: shapes::BASIC,
        source: "RFC 7617 (the Basic scheme)",
    },
    Format {
        kind: "azure-client-secret",
        why: shapes::AZURE,
        source: "gitleaks azure-ad-client-secret",
    },
    Format {
        kind: "aws-secret-access-key",
        why: assign::AWS_SECRET,
        source: "AWS IAM User Guide, \"Manage access keys\" (40-character secret access key)",
    },
    Format {
        kind: "password",
        why: assign::PASSWORD,
        source:
            "rutter's own rule (spec/secrets.md, Assignments); names as gitleaks generic-api-key",
    },
    Format {
        kind: "secret",
        why: assign::SECRET,
        source:
            "rutter's own rule (spec/secrets.md, Assignments); names as gitleaks generic-api-key",
    },
];

/// Every format the scanner masks: the prefix table's rows, then the shapes.
pub fn formats() -> Vec<Format> {
    let rows = rules::RULES.iter().map(|r| Format {
        kind: r.kind,
        why: r.why,
        source: r.source,
    });
    rows.chain(SHAPES.iter().copied()).collect()
}

/// Every kind the scanner can mask, sorted.
pub fn kinds() -> Vec<&'static str> {
    let mut kinds: Vec<_> = formats().iter().map(|f| f.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}
