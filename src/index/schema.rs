//! The index schema and its version. A database whose version differs is rebuilt from the
//! vault; nothing in it is durable (DESIGN §2.4).

/// Bumped whenever a table or the meaning of a column changes.
pub(crate) const SCHEMA_VERSION: &str = "rutter-index 11";

/// The secondary indexes, created after a bulk load (building them at the end is faster than
/// maintaining them row by row).
pub(crate) const CREATE_INDEXES: &str = "
CREATE INDEX notes_by_sha256 ON notes(sha256);
CREATE INDEX identity_bindings_by_to ON identity_bindings(to_path);
CREATE INDEX identity_candidates_by_path ON identity_candidates(path);
";

/// Every table, created in one batch.
pub(crate) const CREATE: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE notes(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL, type TEXT NOT NULL, status TEXT NOT NULL,
    created TEXT NOT NULL, domain TEXT NOT NULL, tags TEXT NOT NULL,
    mtime INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    sha256 TEXT NOT NULL, blob TEXT NOT NULL);
CREATE VIRTUAL TABLE notes_fts USING fts5(path UNINDEXED, title, body, tags, tokenize='porter unicode61');
CREATE TABLE note_dirs(path TEXT NOT NULL UNIQUE, mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
    listed INTEGER NOT NULL, entries BLOB NOT NULL);
CREATE TABLE identity_bindings(from_path TEXT NOT NULL, hash TEXT NOT NULL, to_path TEXT NOT NULL,
    detected TEXT NOT NULL, ts TEXT NOT NULL, PRIMARY KEY(from_path, hash)) WITHOUT ROWID;
CREATE TABLE identity_unresolved(from_path TEXT NOT NULL, hash TEXT NOT NULL, candidates TEXT NOT NULL,
    PRIMARY KEY(from_path, hash)) WITHOUT ROWID;
CREATE TABLE identity_candidates(from_path TEXT NOT NULL, hash TEXT NOT NULL, path TEXT NOT NULL);
CREATE TABLE identity_conflicts(from_path TEXT NOT NULL, hash TEXT NOT NULL, confirmed_to TEXT NOT NULL,
    detected_to TEXT NOT NULL, PRIMARY KEY(from_path, hash)) WITHOUT ROWID;
CREATE TABLE git_candidates(from_path TEXT NOT NULL, blob TEXT NOT NULL, state TEXT NOT NULL,
    candidates TEXT NOT NULL, PRIMARY KEY(from_path, blob)) WITHOUT ROWID;
";

/// The search's cache of how many notes match each phrase (spec/index.md, "Ranking";
/// [`super::rank`]): one row per query term, keyed by the term's SHA-256, with the SHA-256 of
/// the tokens FTS5 parsed it into, their count of matching notes, and the FTS5 structure record
/// the count holds for. No query's text is kept. Created by the first search that stores a
/// count; rows of an earlier structure are deleted with the next store.
pub(crate) const CREATE_SEARCH_COUNTS: &str = "
CREATE TABLE IF NOT EXISTS search_counts(term BLOB PRIMARY KEY, tokens BLOB NOT NULL,
    hits INTEGER NOT NULL, structure BLOB NOT NULL) WITHOUT ROWID;
";

/// The record cache (spec/recall.md), kept apart from the notes' tables. `day_files`: per day
/// file, by its stem (`YYYY-MM-DD`, or `YYYY-MM-DD.<tag>` for one writer's file, spec/sync.md),
/// its day, the committed blob its rows were parsed from (NULL: not committed), a fingerprint of
/// the journal lines waiting for it ('' when none) and the working file's stat they were compared
/// with (NULL: missing). Rows are keyed by `(file, seq)`; `day` is the file's day, so all the
/// files of a day read as one. `entries.status` is the entry's status against the record;
/// `entries.rid` is the entry's number in [`CREATE_GREP`] (unique, never reused while the index
/// lives); `retractions` holds only honoured (committed or journalled) retractions;
/// `supersedes` holds one row per id a recorded (committed or journalled) entry names in its
/// `supersedes` (spec/recall.md, "Supersede"), `seq` the entry's.
pub(crate) const CREATE_RECORDS: &str = "
CREATE TABLE day_files(file TEXT PRIMARY KEY, day TEXT NOT NULL, blob TEXT, journal TEXT NOT NULL,
    size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, ino INTEGER) WITHOUT ROWID;
CREATE TABLE entries(
    file TEXT NOT NULL, day TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL,
    session_id TEXT, project TEXT, project_key TEXT, time TEXT NOT NULL,
    group_key TEXT NOT NULL, json TEXT NOT NULL, status TEXT NOT NULL,
    grep TEXT NOT NULL, rid INTEGER NOT NULL,
    PRIMARY KEY(file, seq)) WITHOUT ROWID;
CREATE TABLE entry_refs(file TEXT NOT NULL, day TEXT NOT NULL, seq INTEGER NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL, blob TEXT);
CREATE TABLE retractions(file TEXT NOT NULL, day TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL,
    retracts TEXT NOT NULL, time TEXT NOT NULL, reason TEXT NOT NULL, status TEXT NOT NULL,
    PRIMARY KEY(file, seq)) WITHOUT ROWID;
CREATE TABLE supersedes(file TEXT NOT NULL, day TEXT NOT NULL, seq INTEGER NOT NULL,
    by_id TEXT NOT NULL, time TEXT NOT NULL, target TEXT NOT NULL);
";

/// The record cache's secondary indexes. Filling an empty cache drops them first and creates
/// them after the rows are in ([`DROP_RECORD_INDEXES`]): faster than maintaining them row by row.
pub(crate) const CREATE_RECORD_INDEXES: &str = "
CREATE INDEX IF NOT EXISTS entries_by_time ON entries(day, time);
CREATE INDEX IF NOT EXISTS entries_by_group ON entries(group_key, day, time);
CREATE INDEX IF NOT EXISTS entries_by_project ON entries(project_key, day, time);
CREATE INDEX IF NOT EXISTS entries_by_id ON entries(id);
CREATE UNIQUE INDEX IF NOT EXISTS entries_by_rid ON entries(rid);
CREATE INDEX IF NOT EXISTS entry_refs_by_path ON entry_refs(path, day, hash, blob);
CREATE INDEX IF NOT EXISTS entry_refs_by_entry ON entry_refs(file, seq);
CREATE INDEX IF NOT EXISTS retractions_by_target ON retractions(retracts);
CREATE INDEX IF NOT EXISTS supersedes_by_file ON supersedes(file);
CREATE INDEX IF NOT EXISTS day_files_journalled ON day_files(file) WHERE journal != '';
CREATE INDEX IF NOT EXISTS day_files_by_day ON day_files(day) WHERE size IS NOT NULL;
";

/// See [`CREATE_RECORD_INDEXES`].
pub(crate) const DROP_RECORD_INDEXES: &str = "
DROP INDEX IF EXISTS entries_by_time;
DROP INDEX IF EXISTS entries_by_group;
DROP INDEX IF EXISTS entries_by_project;
DROP INDEX IF EXISTS entries_by_id;
DROP INDEX IF EXISTS entries_by_rid;
DROP INDEX IF EXISTS entry_refs_by_path;
DROP INDEX IF EXISTS entry_refs_by_entry;
DROP INDEX IF EXISTS retractions_by_target;
DROP INDEX IF EXISTS supersedes_by_file;
DROP INDEX IF EXISTS day_files_journalled;
DROP INDEX IF EXISTS day_files_by_day;
";

/// The words index of the record cache (spec/recall.md "Finding entries by words"): every
/// entry's `grep` text (already lowercased) as the set of its three-character pieces, by
/// `entries.rid`, without positions or text. A word of three characters or more can only be in
/// an entry that has every piece of it, so it names the few entries worth testing with `instr`
/// instead of every entry. Built on first use ([`super::Index::grep_ready`]), kept with the
/// entries from then on.
pub(crate) const CREATE_GREP: &str = "
CREATE VIRTUAL TABLE entries_grep USING fts5(grep, content='', contentless_delete=1, detail=none,
    tokenize='trigram case_sensitive 1');
";

/// FTS5 settings for building from nothing: a 16 MiB pending-terms buffer and no automatic
/// merging while the rows go in. FTS5 counts only the terms' bytes against the buffer, so its
/// hash grows well past it; 16 MiB keeps the peak under the memory target on 10,000 and 50,000
/// notes in the same time, and searches as fast afterwards (measured, docs/performance.md).
pub(crate) const BULK_LOAD: &str = "
INSERT INTO notes_fts(notes_fts, rank) VALUES('hashsize', 16777216);
INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 0);
";

/// Back to FTS5's defaults once the bulk load is in (the settings persist in the table).
pub(crate) const BULK_DONE: &str = "
INSERT INTO notes_fts(notes_fts, rank) VALUES('automerge', 4);
INSERT INTO notes_fts(notes_fts, rank) VALUES('hashsize', 1048576);
";
