//! The sessions a writer opens: a [`Recorder`] (the capture lock held, the store, the pending
//! journal), a [`Capture`] (a Recorder, or the journal alone when the lock could not be had in
//! time) and a [`Snapshot`] (the lock held, if it could be, for a reader that reads several
//! things together). Only this module takes the capture lock or opens the journal.

use super::append::Appender;
use crate::fsx::FsError;
use crate::journal::Journal;
use crate::lock::{Lock, LockError};
use crate::store::{Located, Place, Store, StoreError};
use std::cell::OnceCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A write session on one vault: opening it takes the capture lock, and dropping it releases
/// the lock. Every write to the record goes through one (append, replay of what is pending,
/// commit, and the other writes: DESIGN §2.7), so a function that needs the lock held takes a
/// `&Recorder` and the compiler checks it.
pub(crate) struct Recorder<'s> {
    /// Held for the session's life; released on drop.
    _lock: Lock,
    root: PathBuf,
    state_dir: PathBuf,
    /// A git vault: only one has a pending journal and a store.
    git: bool,
    /// The store the opener gave.
    store: Option<&'s Store>,
    /// Where to open the store on first use ([`Recorder::lock_vault`]), and the store once
    /// opened.
    lazy: Option<Place>,
    opened: OnceCell<Store>,
    /// Opened on first use; `Some(None)`: a capture's journal could not be opened, and the
    /// capture goes on without it.
    journal: OnceCell<Option<Journal>>,
}

impl<'s> Recorder<'s> {
    /// Takes the capture lock of `store`'s vault, waiting at most `wait`
    /// ([`crate::lock::INTERACTIVE_WAIT`] for a command run by hand).
    pub(crate) fn lock(store: &'s Store, wait: Duration) -> Result<Recorder<'s>, LockError> {
        let lock = Lock::acquire(store.state_dir(), wait)?;
        let place = (store.root(), store.state_dir(), true);
        Ok(Recorder::held(lock, place, Some(store), None))
    }

    /// Takes the capture lock of `vault`, which may be no git repository; its store is opened
    /// when first needed (in a git vault), and in a vault that is none, lines are appended
    /// without a journal or a commit.
    pub(crate) fn lock_vault(
        vault: &impl Located,
        wait: Duration,
    ) -> Result<Recorder<'s>, LockError> {
        let place = vault.place();
        let lock = Lock::acquire(&place.state_dir, wait)?;
        let at = (
            place.root.as_path(),
            place.state_dir.as_path(),
            place.git_dir.is_some(),
        );
        let mut session = Recorder::held(lock, at, None, None);
        session.lazy = Some(place);
        Ok(session)
    }

    /// A session on the vault at `(root, state folder, whether it is a git repository)`.
    fn held(
        lock: Lock,
        (root, state_dir, git): (&Path, &Path, bool),
        store: Option<&'s Store>,
        journal: Option<Option<Journal>>,
    ) -> Recorder<'s> {
        Recorder {
            _lock: lock,
            root: root.to_path_buf(),
            state_dir: state_dir.to_path_buf(),
            git,
            store,
            lazy: None,
            opened: OnceCell::new(),
            journal: journal.map_or_else(OnceCell::new, OnceCell::from),
        }
    }

    /// Takes the capture lock for a reader that must read several things together (a ref, its
    /// reflog and the witness log), waiting at most `wait`; when it cannot be had, the reader
    /// goes on without it ([`Snapshot::missed`]) and says so. Nothing is written through it.
    pub(crate) fn try_snapshot(state_dir: &Path, wait: Duration) -> Snapshot {
        Snapshot {
            lock: Lock::acquire(state_dir, wait).ok(),
        }
    }

    /// The vault's store (`StoreError::NotGit` in a vault that is no git repository, and in a
    /// capture whose store could not be opened).
    pub(crate) fn store(&self) -> Result<&Store, StoreError> {
        if let Some(s) = self.store.or(self.opened.get()) {
            return Ok(s);
        }
        let Some(place) = self.lazy.as_ref().filter(|_| self.git) else {
            return Err(StoreError::NotGit(self.root.clone()));
        };
        let opened = Store::open(place)?;
        Ok(self.opened.get_or_init(|| opened))
    }

    /// The vault's root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// The vault's state folder (lock, journal, aside folder).
    pub(crate) fn state_dir(&self) -> &Path {
        &self.state_dir
    }

    /// Whether the vault is a git repository.
    pub(crate) fn git(&self) -> bool {
        self.git
    }

    /// The pending journal, opened (created) on first use; `None` in a vault that is no git
    /// repository (or whose store cannot be opened), or in a capture whose journal could not be
    /// opened.
    pub(super) fn journal(&self) -> Result<Option<&Journal>, FsError> {
        if let Some(j) = self.journal.get() {
            return Ok(j.as_ref());
        }
        if !self.git() || self.store().is_err() {
            return Ok(None);
        }
        let opened = Journal::open(self.state_dir())?;
        Ok(self.journal.get_or_init(|| Some(opened)).as_ref())
    }

    /// Opens the pending journal now (an error is the command's), and says where it is, for
    /// messages.
    pub(crate) fn journal_path(&self) -> Result<PathBuf, FsError> {
        Ok(match self.journal()? {
            Some(j) => j.path().to_path_buf(),
            None => self.state_dir().join("pending"),
        })
    }

    /// What appends a line and journals it, under this session's lock.
    pub(crate) fn appender(&self) -> Appender<'_> {
        let journal = self.journal.get().and_then(Option::as_ref);
        Appender::new(journal, true, self.store().ok())
    }
}

/// A capture's session (spec/capture.md): the [`Recorder`] when the capture lock was had in
/// time; else the journal alone, so the capture still lands its lines (day file and journal
/// record, an id of its own) and leaves their commit to the next capture or `git rutter
/// commit`.
pub(crate) enum Capture<'s> {
    Locked(Recorder<'s>),
    Missed {
        journal: Option<Journal>,
        why: LockError,
    },
}

impl<'s> Capture<'s> {
    /// Takes the capture lock of `vault` (waiting at most `wait`) and opens its journal (in a
    /// git vault), with or without the lock; why the journal could not be opened, when it could
    /// not (the capture goes on: the day file takes the line, the commit takes it from memory).
    pub(crate) fn open(
        vault: &impl Located,
        store: Option<&'s Store>,
        wait: Duration,
    ) -> (Capture<'s>, Option<FsError>) {
        let place = vault.place();
        let held = Lock::acquire(&place.state_dir, wait);
        let (journal, problem) = match place.git_dir {
            Some(_) => match Journal::open(&place.state_dir) {
                Ok(j) => (Some(j), None),
                Err(e) => (None, Some(e)),
            },
            None => (None, None),
        };
        let session = match held {
            Ok(lock) => {
                let at = (
                    place.root.as_path(),
                    place.state_dir.as_path(),
                    place.git_dir.is_some(),
                );
                Capture::Locked(Recorder::held(lock, at, store, Some(journal)))
            }
            Err(why) => Capture::Missed { journal, why },
        };
        (session, problem)
    }

    /// The Recorder, when the lock is held.
    pub(crate) fn recorder(&self) -> Option<&Recorder<'s>> {
        match self {
            Capture::Locked(r) => Some(r),
            Capture::Missed { .. } => None,
        }
    }

    /// Why the lock could not be had, when it could not.
    pub(crate) fn missed(&self) -> Option<&LockError> {
        match self {
            Capture::Locked(_) => None,
            Capture::Missed { why, .. } => Some(why),
        }
    }

    /// What appends the capture's lines and journals them.
    pub(crate) fn appender(&self) -> Appender<'_> {
        match self {
            Capture::Locked(r) => r.appender(),
            Capture::Missed { journal, .. } => Appender::new(journal.as_ref(), false, None),
        }
    }
}

/// A read session ([`Recorder::try_snapshot`]): the capture lock, held until it is dropped if
/// it could be had.
#[derive(Debug)]
pub(crate) struct Snapshot {
    lock: Option<Lock>,
}

impl Snapshot {
    /// The lock could not be had: what is read may be mid-capture (best effort).
    pub(crate) fn missed(&self) -> bool {
        self.lock.is_none()
    }
}
