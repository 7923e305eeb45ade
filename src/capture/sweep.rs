//! What `git rutter commit` clears before it commits: the temporary files writers killed
//! mid-write left in the record folders and the dedupe cache (captures sweep only the journal
//! and the aside folders, which they list anyway).

use crate::fsx::Dir;
use crate::recorder::replay::STALE_TEMP;
use crate::records::paths;
use crate::vault::Vault;

/// Removes the stale temporary files of the record folders and the dedupe cache; how many.
pub fn sweep(vault: &Vault) -> usize {
    let mut removed = 0;
    if let Ok(root) = Dir::open(&vault.root) {
        for rel in [paths::SESSIONS_DIR, crate::vault::OVERLAY_DIR] {
            if let Ok(Some(d)) = root.open_dir(rel, false) {
                removed += d.sweep_temps(STALE_TEMP);
            }
        }
    }
    let dedupe =
        Dir::open_private(&vault.worktree_state_dir()).and_then(|d| d.open_dir("dedupe", false));
    if let Ok(Some(d)) = dedupe {
        removed += d.sweep_temps(STALE_TEMP);
    }
    removed
}
