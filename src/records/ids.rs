//! Record ids (spec/record-format.md, "Entry ids"): the one rule every writer of an entry or a
//! retraction stamps by. An id is the record's UTC instant, compact
//! (`20261130T073141112Z`), then the writer's tag once sync is set up (`-laptop-3f9a`: no
//! other machine stamps it), then `-p<pid>` when the capture lock could not be had (no other
//! running process stamps it; calls within one process are serialised), then `-2`, `-3`, … while
//! the day file's tail already holds the id.

use crate::clock::Instant;
use memchr::memmem;

/// How much of a day file's end is searched for a taken id.
pub(crate) const TAIL_BYTES: usize = 64 * 1024;

/// The id before the `-N` rule: the instant, the writer's tag, and `-p<pid>` when written
/// without the capture lock.
pub fn base(now: Instant, writer: Option<&str>, unlocked_pid: Option<u32>) -> String {
    let mut id = now.compact();
    if let Some(tag) = writer {
        id.push('-');
        id.push_str(tag);
    }
    if let Some(pid) = unlocked_pid {
        id.push_str(&format!("-p{pid}"));
    }
    id
}

/// `base`, or `base-2`, `base-3`, … the first that the last [`TAIL_BYTES`] of `file` (a day
/// file's bytes) do not hold as an `"id"`.
pub(crate) fn unique(base: &str, file: &[u8]) -> String {
    let tail = &file[file.len().saturating_sub(TAIL_BYTES)..];
    let taken = |id: &str| memmem::find(tail, format!("\"id\":\"{id}\"").as_bytes()).is_some();
    let mut id = base.to_string();
    let mut n = 2;
    while taken(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    id
}

/// The time of the last record line in the tail of a day file (`"time":"…"`), if it reads as an
/// instant: a new record is stamped after it, so times only grow within a day file even when a
/// turn's entries were stamped ahead of the clock (entry `k` is `first + k` ms).
pub fn last_time(file: &[u8]) -> Option<Instant> {
    let tail = &file[file.len().saturating_sub(TAIL_BYTES)..];
    let key = b"\"time\":\"";
    let at = memmem::rfind(tail, key)? + key.len();
    let end = at + memchr::memchr(b'"', &tail[at..])?;
    crate::clock::parse_instant(std::str::from_utf8(&tail[at..end]).ok()?)
}

/// `now`, or just after the last record of `file` when that is not earlier.
pub fn after_last(now: Instant, file: &[u8]) -> Instant {
    match last_time(file) {
        Some(t) if t.0 >= now.0 => Instant(t.0 + 1),
        _ => now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_the_writer_the_process_and_a_suffix_when_taken() {
        let now = Instant(1_796_023_901_112);
        let plain = base(now, None, None);
        assert_eq!(plain, now.compact());
        assert_eq!(
            base(now, Some("laptop-3f9a"), None),
            format!("{plain}-laptop-3f9a")
        );
        assert_eq!(
            base(now, Some("laptop-3f9a"), Some(42)),
            format!("{plain}-laptop-3f9a-p42")
        );
        let file = format!("x {{\"id\":\"{plain}\"}}\n{{\"id\":\"{plain}-2\"}}\n");
        assert_eq!(unique(&plain, file.as_bytes()), format!("{plain}-3"));
        assert_eq!(unique(&plain, b""), plain);
    }

    #[test]
    fn a_new_record_is_stamped_after_the_last_one() {
        let t = Instant(1_796_023_901_112);
        let file = format!(
            "- x <!-- rutter:entry {{\"id\":\"a\",\"time\":\"{}\"}} -->\n",
            t.iso()
        );
        assert_eq!(last_time(file.as_bytes()), Some(t));
        assert_eq!(
            after_last(Instant(t.0 - 5), file.as_bytes()),
            Instant(t.0 + 1)
        );
        assert_eq!(after_last(t, file.as_bytes()), Instant(t.0 + 1));
        assert_eq!(
            after_last(Instant(t.0 + 9), file.as_bytes()),
            Instant(t.0 + 9)
        );
        assert_eq!(last_time(b"\"time\":\"garbage"), None);
    }
}
