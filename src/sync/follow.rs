//! The working record files follow the ref (DESIGN invariant 11, spec/sync.md "Working
//! files"), whatever stops a sync.
//!
//! Sync notes every move of the ref before it makes it (`<state>/checkout`: `moving FROM TO`)
//! and brings the working files along right after, under the same capture lock; then the note
//! says `at TIP`. A sync stopped between the two (a kill, a full disk) leaves `moving`: the
//! next sync finishes that checkout before anything else, from the tree the files were
//! committed as, so nothing is taken for an edit. A vault with no note (one that synced before
//! this note existed) is brought up once from what its files hold ([`checkout::bring_up`]).

use super::checkout::{self, Checkout};
use crate::fsx::Dir;
use crate::objectid::ObjectId;
use crate::recorder::Recorder;
use crate::store::{Store, StoreError};
use std::path::Path;

/// The note, in the state folder.
const NOTE: &str = "checkout";

/// What the note says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Note {
    /// The working files were brought to this tip.
    At(ObjectId),
    /// The ref is being moved from one tip to another; the files are not there yet.
    Moving { from: ObjectId, to: ObjectId },
}

impl Note {
    fn render(self) -> String {
        match self {
            Note::At(t) => format!("at {t}\n"),
            Note::Moving { from, to } => format!("moving {from} {to}\n"),
        }
    }

    fn parse(text: &str) -> Option<Note> {
        let mut words = text.split_whitespace();
        let oid = |w: Option<&str>| w.and_then(|w| ObjectId::from_hex(w).ok());
        let note = match words.next()? {
            "at" => Note::At(oid(words.next())?),
            "moving" => Note::Moving {
                from: oid(words.next())?,
                to: oid(words.next())?,
            },
            _ => return None,
        };
        words.next().is_none().then_some(note)
    }
}

/// The note in `state_dir` (`None`: none, or not one this tool wrote).
pub(crate) fn read(state_dir: &Path) -> Option<Note> {
    let bytes = Dir::open(state_dir).ok()?.read_at_most(NOTE, 256).ok()??;
    Note::parse(std::str::from_utf8(&bytes).ok()?)
}

fn write(state_dir: &Path, note: Note) -> Result<(), StoreError> {
    Dir::open_private(state_dir)?.write_atomic(NOTE, note.render().as_bytes())?;
    Ok(())
}

/// Moves the ref from `from` to `to` with `advance`, then brings the working files from the
/// tree of `from` to the tree of `to`, under `recorder`'s lock.
pub(crate) fn advance(
    store: &Store,
    recorder: &Recorder<'_>,
    from: ObjectId,
    to: ObjectId,
    advance: impl FnOnce() -> Result<(), StoreError>,
) -> Result<Checkout, StoreError> {
    write(store.state_dir(), Note::Moving { from, to })?;
    advance()?;
    crate::failpoint::check("sync-checkout")?;
    let out = check_out(store, recorder, from, to)?;
    write(store.state_dir(), Note::At(to))?;
    Ok(out)
}

/// Before a sync changes anything: finishes the checkout a stopped sync left, or brings a
/// vault with no note up to its tip once, under `recorder`'s lock.
pub(crate) fn recover(store: &Store, recorder: &Recorder<'_>) -> Result<Checkout, StoreError> {
    let Some(tip) = store.tip()? else {
        return Ok(Checkout::default());
    };
    let out = match read(store.state_dir()) {
        Some(Note::At(_)) => return Ok(Checkout::default()),
        // The move was made (the tip is there or beyond it): finish its checkout.
        Some(Note::Moving { from, to }) if reached(store, tip, to)? => {
            let out = check_out(store, recorder, from, to)?;
            write(store.state_dir(), Note::At(to))?;
            return Ok(out);
        }
        // It never was: the files stand where they stood.
        Some(Note::Moving { .. }) => Checkout::default(),
        None => {
            let mut trees = store.trees()?;
            checkout::bring_up(store, &mut trees, store.tree_of(tip)?, recorder)?
        }
    };
    write(store.state_dir(), Note::At(tip))?;
    Ok(out)
}

/// Whether the ref reached `to`: the tip is `to` or descends from it.
fn reached(store: &Store, tip: ObjectId, to: ObjectId) -> Result<bool, StoreError> {
    if tip == to {
        return Ok(true);
    }
    // An id that names no commit here (a note from another repository) was never reached.
    Ok(store.tree_of(to).is_ok() && store.descends(tip, to)?)
}

fn check_out(
    store: &Store,
    recorder: &Recorder<'_>,
    from: ObjectId,
    to: ObjectId,
) -> Result<Checkout, StoreError> {
    let mut trees = store.trees()?;
    let (old, new) = (store.tree_of(from)?, store.tree_of(to)?);
    checkout::check_out(store, &mut trees, old, new, recorder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn notes_read_back_and_anything_else_is_none() {
        let a = ObjectId::from_hex("0123456789abcdef0123456789abcdef01234567").unwrap();
        let b = ObjectId::from_hex("89abcdef0123456789abcdef0123456789abcdef").unwrap();
        for n in [Note::At(a), Note::Moving { from: a, to: b }] {
            assert_eq!(Note::parse(&n.render()), Some(n));
        }
        let extra = format!("at {a} {b}");
        for bad in ["", "at", "at zz", "moving 0123", &extra, "left 0123"] {
            assert_eq!(Note::parse(bad), None, "{bad}");
        }
    }

    use crate::sync::checkout::tests::vault;

    const DAY: &str = "_librarian/sessions/2026-11-30.laptop-0001.md";

    /// A commit on `parent` whose tree holds `text` at [`DAY`].
    fn commit(store: &Store, parent: Option<ObjectId>, text: &str) -> ObjectId {
        let blob = store.write_blob(text.as_bytes()).unwrap();
        let tree = store
            .trees()
            .unwrap()
            .write(None, &[(DAY.into(), blob)])
            .unwrap();
        let now = crate::clock::parse_instant("2026-11-30T10:00:00.000Z").unwrap();
        let parents: Vec<ObjectId> = parent.into_iter().collect();
        store
            .write_commit_of(&parents, tree, "rutter: test\n", now, false)
            .unwrap()
    }

    fn working(store: &Store) -> Option<String> {
        std::fs::read_to_string(store.root().join(DAY)).ok()
    }

    fn point_ref(store: &Store, to: ObjectId) {
        let repo = git2::Repository::open(store.root()).unwrap();
        let to = git2::Oid::from_str(&to.to_string()).unwrap();
        repo.reference(crate::store::RECORDS_REF, to, true, "test")
            .unwrap();
    }

    /// Two commits, the ref at the first and the working file as it commits, and a note that
    /// a sync is moving the ref to the second.
    fn moving(store: &Store) -> (ObjectId, ObjectId) {
        let from = commit(store, None, "H\na\n");
        let to = commit(store, Some(from), "H\na\nb\n");
        point_ref(store, from);
        std::fs::create_dir_all(store.root().join("_librarian/sessions")).unwrap();
        std::fs::write(store.root().join(DAY), "H\na\n").unwrap();
        write(store.state_dir(), Note::Moving { from, to }).unwrap();
        (from, to)
    }

    #[test]
    fn a_move_whose_checkout_never_ran_is_checked_out_by_the_next_sync() {
        let (_t, store, _journal) = vault();
        let (_, to) = moving(&store);
        // The sync moved the ref and stopped there.
        point_ref(&store, to);
        let out = recover(
            &store,
            &Recorder::lock(&store, crate::lock::INTERACTIVE_WAIT).unwrap(),
        )
        .unwrap();
        assert_eq!(out.updated, [DAY]);
        assert_eq!(working(&store).as_deref(), Some("H\na\nb\n"));
        assert_eq!(read(store.state_dir()), Some(Note::At(to)));
        // Once checked out, the next sync has nothing to finish.
        assert_eq!(
            recover(
                &store,
                &Recorder::lock(&store, crate::lock::INTERACTIVE_WAIT).unwrap()
            )
            .unwrap(),
            Checkout::default()
        );
    }

    #[test]
    fn a_move_that_never_happened_writes_nothing() {
        let (_t, store, _journal) = vault();
        let (from, _) = moving(&store);
        assert_eq!(
            recover(
                &store,
                &Recorder::lock(&store, crate::lock::INTERACTIVE_WAIT).unwrap()
            )
            .unwrap(),
            Checkout::default()
        );
        assert_eq!(working(&store).as_deref(), Some("H\na\n"));
        assert_eq!(read(store.state_dir()), Some(Note::At(from)));
    }

    #[test]
    fn a_vault_without_a_note_is_brought_up_once() {
        let (_t, store, _journal) = vault();
        let tip = commit(&store, None, "H\na\n");
        point_ref(&store, tip);
        let out = recover(
            &store,
            &Recorder::lock(&store, crate::lock::INTERACTIVE_WAIT).unwrap(),
        )
        .unwrap();
        assert_eq!(out.updated, [DAY], "another writer's file was missing");
        assert_eq!(read(store.state_dir()), Some(Note::At(tip)));
    }

    proptest! {
        #[test]
        fn reading_a_note_never_panics(s in "\\PC{0,100}") {
            let _ = Note::parse(&s);
        }
    }
}
