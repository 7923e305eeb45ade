//! `init`: make a folder a vault. It becomes a git repository if it is none, is resolved as a
//! vault, and then gets its record ref ([`adopt`]: create or adopt, materialise). Also the
//! `rutter.*` keys a setup may set, and what each does ([`settings`], `git rutter config`).

pub(crate) mod adopt;
pub(crate) mod clone;
pub(crate) mod settings;

use crate::clock::Instant;
use crate::store::{gitenv, StoreError};
use crate::vault::{self, Vault, VaultError, VaultSource};
use adopt::adopt;
use std::path::Path;

pub use adopt::{InitError as AdoptError, InitReport};

/// Why `init` stopped.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Vault(#[from] VaultError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Adopt(#[from] AdoptError),
}

impl crate::hint::Hinted for InitError {
    fn hint(&self) -> Option<String> {
        match self {
            InitError::Vault(e) => e.hint(),
            InitError::Store(e) => e.hint(),
            InitError::Adopt(e) => e.hint(),
        }
    }

    fn users_to_fix(&self) -> bool {
        match self {
            InitError::Vault(e) => e.users_to_fix(),
            InitError::Store(e) => e.users_to_fix(),
            InitError::Adopt(e) => e.users_to_fix(),
        }
    }
}

impl InitError {
    /// The records `init` would start from were refused (a remote's or a hand-fetched ref).
    pub(crate) fn is_refusal(&self) -> bool {
        matches!(self, InitError::Adopt(AdoptError::Refused { .. }))
    }
}

/// Initialises the vault at `root`.
pub fn init(root: &Path, now: Instant) -> Result<(Vault, InitReport), InitError> {
    init_seeing(root, now, &mut |_, _| {})
}

/// [`init`], handing `each` every file an adoption reads (its path and bytes) as it is read.
pub(crate) fn init_seeing(
    root: &Path,
    now: Instant,
    each: &mut dyn FnMut(&str, Vec<u8>),
) -> Result<(Vault, InitReport), InitError> {
    let mut v = vault::open(root, VaultSource::Flag)?;
    let created = v.git_dir.is_none();
    if created {
        gitenv::init_repo(&v.root)?;
        v = vault::open(&v.root, VaultSource::Flag)?;
    }
    let mut report = adopt(&v, now, each)?;
    report.created_repository = created;
    Ok((v, report))
}
