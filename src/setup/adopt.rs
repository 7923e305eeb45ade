//! `init` on a git repository: create or adopt the record ref (or start from a clone's remote
//! records, checked first), materialise records a clone lacks, and keep `_librarian/` out of
//! the user's `git status` (DESIGN §3).

use crate::audit::intake::{self, IntakeError, Refusal};
use crate::clock::Instant;
use crate::fsx::Dir;
use crate::lock;
use crate::objectid::ObjectId;
use crate::recorder::Recorder;
use crate::store::adopt::Adoption;
use crate::store::{Located, Store, StoreError, RECORDS_REF};

/// What `init` did.
#[derive(Debug, Default)]
pub struct InitReport {
    pub created_repository: bool,
    pub created_ref: bool,
    pub adopted: Vec<String>,
    pub skipped: Vec<(String, String)>,
    pub materialised: Vec<String>,
    /// Local files that differ from the ref and were left untouched.
    pub differing: Vec<String>,
    pub excluded: bool,
    pub tip: String,
    /// What a clone's start did: records fetched from its remote, evidence started.
    pub clone: super::clone::CloneStart,
    /// Tips that could not be witnessed in `.git/rutter/tips`, with why.
    pub unwitnessed: Vec<String>,
}

/// Errors from `init` beyond the store's own.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Lock(#[from] crate::lock::LockError),
    /// The records a clone would start from break the audit's rules: nothing was taken.
    #[error("refused {what}{}: {refusal}; nothing was written from them. Inspect them with `git log --stat {inspect}`; see docs/sync.md, \"A refused remote\"", tip.map(|t| format!(" at {}", crate::shortid::long(&t))).unwrap_or_default())]
    Refused {
        what: String,
        inspect: String,
        tip: Option<ObjectId>,
        refusal: Box<Refusal>,
    },
}

impl crate::hint::Hinted for InitError {
    fn hint(&self) -> Option<String> {
        match self {
            InitError::Store(e) => e.hint(),
            InitError::Lock(_) | InitError::Refused { .. } => None,
        }
    }

    fn users_to_fix(&self) -> bool {
        match self {
            InitError::Store(e) => e.users_to_fix(),
            InitError::Lock(_) | InitError::Refused { .. } => false,
        }
    }
}

/// Creates or adopts the record ref of the git vault at `place` and writes what it holds
/// (`init` after the repository exists), handing `each` every file an adoption reads (its path
/// and bytes) as it is read.
pub(crate) fn adopt(
    place: &impl Located,
    now: Instant,
    each: &mut dyn FnMut(&str, Vec<u8>),
) -> Result<InitReport, InitError> {
    let mut report = InitReport::default();
    let store = Store::open(place)?;
    let recorder = Recorder::lock(&store, lock::INTERACTIVE_WAIT)?;
    report.clone = super::clone::fetch_records_if_missing(&recorder)?;
    if let Some((remote, tip, refusal)) = report.clone.refused.take() {
        return Err(InitError::Refused {
            what: format!("the records of {remote}"),
            inspect: crate::store::transport::tracking_ref(&remote),
            tip,
            refusal: Box::new(refusal),
        });
    }
    refuse_unwitnessed(&store)?;
    // First of the writes: an exclude file that cannot be written (a symlink, unreadable)
    // stops `init` before the ref exists, not after it (the records would show in `git status`).
    report.excluded = crate::store::exclude::exclude_overlay(&store)?;
    recorder.configure_reflog()?;
    let Adoption {
        tip,
        created,
        adopted,
        skipped,
        unwitnessed,
    } = recorder.adopt(now, each)?;
    report.created_ref = created;
    report.adopted = adopted;
    report.skipped = skipped;
    report.tip = tip.to_string();
    report.unwitnessed.extend(unwitnessed);
    report.unwitnessed.extend(report.clone.unwitnessed.take());
    if !created {
        materialise(&store, tip, &mut report)?;
        if report.clone.seeded.is_none() {
            if let Some((seeded, problem)) = recorder.seed_evidence_if_fresh()? {
                report.clone.seeded = Some(seeded);
                report.unwitnessed.extend(problem);
            }
        }
    }
    Ok(report)
}

/// A record ref this machine never witnessed (fetched by hand) is input like a remote's: its
/// whole history is checked before `init` writes a file from it or starts its evidence.
fn refuse_unwitnessed(store: &Store) -> Result<(), InitError> {
    let Some(tip) = store.tip()? else {
        return Ok(());
    };
    if !store.ref_is_unwitnessed()? {
        return Ok(());
    }
    match intake::check_incoming(store, tip, None) {
        Ok(_) => Ok(()),
        Err(IntakeError::Refused(refusal)) => Err(InitError::Refused {
            what: format!("{RECORDS_REF}, which this machine never wrote or witnessed"),
            inspect: RECORDS_REF.to_string(),
            tip: Some(tip),
            refusal: Box::new(refusal),
        }),
        Err(IntakeError::Store(e)) => Err(e.into()),
    }
}

/// Writes record files present in the ref but missing locally, in path order; never overwrites
/// a file.
fn materialise(store: &Store, tip: ObjectId, report: &mut InitReport) -> Result<(), StoreError> {
    let root = Dir::open(store.root())?;
    let mut files = store.record_files(tip)?;
    files.sort();
    for (path, blob) in files {
        let committed = store.blob(blob)?;
        let committed = committed.as_slice();
        let (d, name) = match crate::overlay::folder_in(&root, &path, true) {
            Ok(found) => found,
            Err(crate::overlay::OverlayError::Fs(e)) => return Err(e.into()),
            Err(_) => {
                report.differing.push(path);
                continue;
            }
        };
        match d.read(name) {
            Ok(Some(local)) if local.starts_with(committed) => {}
            Ok(Some(_)) | Err(_) => report.differing.push(path),
            Ok(None) => {
                if d.create_new(name, committed)? {
                    report.materialised.push(path);
                }
            }
        }
    }
    Ok(())
}
