//! This vault's writer id: the stable tag of the day files only this clone appends to once sync
//! is set up (spec/sync.md, "One writer per file"), kept in `.git/rutter/machine`.
//!
//! It is made once, by `sync --setup`, from the short host name and four random hex digits
//! (`laptop-3f9a`), so two clones on one machine differ too. It lives in `.git/`, never in the
//! records, so a clone never inherits another's id.

use crate::fsx::Dir;
use crate::records::paths;
use std::path::Path;

/// The file under the state folder that holds the id.
pub(crate) const MACHINE_FILE: &str = "machine";

/// The id recorded in `state_dir`, if there is a valid one.
pub(crate) fn read(state_dir: &Path) -> Option<String> {
    let bytes = Dir::open(state_dir).ok()?.read(MACHINE_FILE).ok()??;
    let id = String::from_utf8(bytes).ok()?.trim().to_string();
    paths::is_tag(&id).then_some(id)
}

/// The id recorded in `state_dir`, made and recorded first when there is none (a file that
/// holds no valid id is left as it is and reported).
pub fn ensure(state_dir: &Path) -> Result<String, crate::fsx::FsError> {
    if let Some(id) = read(state_dir) {
        return Ok(id);
    }
    // Created without following a symlink: a symlinked `.git/rutter` is refused.
    let dir = Dir::open_private(state_dir)?;
    let id = make(&host_name(), &entropy(state_dir));
    if !dir.publish_new(MACHINE_FILE, format!("{id}\n").as_bytes())? {
        // Another process made one first, or the file holds no valid id: use what is there.
        return read(state_dir)
            .ok_or_else(|| crate::fsx::FsError::WrongKind(state_dir.join(MACHINE_FILE)));
    }
    Ok(id)
}

/// `<host>-<4 hex>`: the host name lowercased, anything but `a-z0-9` as `-`, at most 20
/// characters, `m` when nothing is left or it would read as a `v1-` tag.
pub(crate) fn make(host: &str, random_hex: &str) -> String {
    let short = host.split('.').next().unwrap_or("");
    let mut slug = String::new();
    for c in short.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (slug.is_empty() || slug.ends_with('-'))) {
            slug.push(c);
        }
        if slug.len() == 20 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    let slug = if slug.is_empty() || slug.starts_with("v1-") || slug == "v1" {
        format!("m{slug}")
    } else {
        slug.to_string()
    };
    let hex: String = random_hex
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(4)
        .collect::<String>()
        .to_lowercase();
    format!("{slug}-{hex:0>4}")
}

/// The kernel's node name (`uname`: on Linux what /proc/sys/kernel/hostname holds; macOS has
/// neither that nor /etc/hostname), else `$HOSTNAME`.
fn host_name() -> String {
    let node = rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned();
    match node.trim() {
        "" => std::env::var("HOSTNAME").unwrap_or_default(),
        name => name.to_string(),
    }
}

/// Hex digits that differ between two clones made on one machine: a hash of the time, the
/// process and the state folder.
fn entropy(state_dir: &Path) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!("{nanos}:{}:{}", std::process::id(), state_dir.display());
    crate::records::fingerprint::sha256_hex(seed.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn the_host_name_is_the_kernels() {
        let proc = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(host_name(), proc.trim());
        assert!(!host_name().is_empty());
    }

    #[test]
    fn ids_read_as_day_file_tags() {
        assert_eq!(make("Ada's-MacBook.local", "3F9A77"), "ada-s-macbook-3f9a");
        assert_eq!(make("", "0"), "m-0000");
        assert_eq!(make("v1-box", "abcd"), "mv1-box-abcd");
        assert_eq!(make("желе", "abcd"), "m-abcd");
        let t = tempfile::tempdir().unwrap();
        let id = ensure(t.path()).unwrap();
        assert_eq!(ensure(t.path()).unwrap(), id, "made once, then kept");
        assert_eq!(read(t.path()), Some(id));
        let other = tempfile::tempdir().unwrap();
        assert_ne!(ensure(other.path()).unwrap(), read(t.path()).unwrap());
    }

    proptest! {
        /// Whatever the host is called, the id is a valid tag that no `v1-` file name can take.
        #[test]
        fn any_host_gives_a_tag(host in any::<String>(), hex in "[0-9a-fA-F]{0,8}") {
            let id = make(&host, &hex);
            prop_assert!(paths::is_tag(&id), "{}", id);
            prop_assert!(!id.starts_with("v1-"));
        }
    }
}
