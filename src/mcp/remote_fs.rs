//! Whether the vault lies on a file system shared with other machines (NFS, SMB, FUSE, 9p…),
//! where a change another machine makes reaches no local watcher: there the server never
//! vouches for the index, and commands run the full check (spec/index.md, "The watcher's
//! answer").

use std::path::Path;

/// The kind of shared file system `path` lies on, or `None` for a local one (or one that cannot
/// be told: the watcher then vouches as before). The fail point `watch-remote-fs` makes every
/// file system count as NFS.
pub(crate) fn remote_kind(path: &Path) -> Option<&'static str> {
    if crate::failpoint::active("watch-remote-fs") {
        return Some("nfs");
    }
    magic_of(path).and_then(kind_of_magic)
}

#[cfg(target_os = "linux")]
fn magic_of(path: &Path) -> Option<u64> {
    // The magic number is a signed word on some targets; its bits are what matter.
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::statfs(path).ok().map(|s| s.f_type as u64)
}

#[cfg(not(target_os = "linux"))]
fn magic_of(_path: &Path) -> Option<u64> {
    None
}

/// The shared file systems by their magic number (`linux/magic.h`, and FUSE's, CIFS's and
/// SMB2's own).
fn kind_of_magic(magic: u64) -> Option<&'static str> {
    Some(match magic & 0xFFFF_FFFF {
        0x6969 => "nfs",
        0x517B => "smb",
        0xFF53_4D42 => "cifs",
        0xFE53_4D42 => "smb2",
        0x6573_5546 => "fuse",
        0x0102_1997 => "9p",
        0x00C3_6400 => "ceph",
        0x5346_414F => "afs",
        0x0116_1970 => "gfs2",
        0x7461_636F => "ocfs2",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_file_systems_are_told_by_their_magic_and_local_ones_are_not() {
        assert_eq!(kind_of_magic(0x6969), Some("nfs"));
        assert_eq!(kind_of_magic(0xFF53_4D42), Some("cifs"));
        assert_eq!(kind_of_magic(0x6573_5546), Some("fuse"));
        // A signed word sign-extended to 64 bits is the same file system.
        assert_eq!(kind_of_magic(0xFFFF_FFFF_FF53_4D42), Some("cifs"));
        for local in [0xEF53, 0x0102_1994, 0x9123_683E, 0x5846_5342, 0x794C_7630] {
            assert_eq!(kind_of_magic(local), None, "{local:#x}");
        }
        let here = tempfile::tempdir().unwrap();
        assert_eq!(
            remote_kind(here.path()),
            None,
            "the test's temp dir is local"
        );
    }
}
