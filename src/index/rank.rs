//! The search's ranking (spec/index.md, "Ranking"): `rutter_bm25`, FTS5's own `bm25()`
//! computed the same way to the bit, except for where each phrase's number of matching notes
//! comes from. `bm25()` counts them on every query by walking each phrase's whole document
//! list, the part of a search that grew with the notes (a third of a 3-word search at 50,000
//! notes, docs/performance.md "Stop 60"). Here a count is taken from a cache when the cache
//! holds it for the index's present state and the phrase's own tokens, and counted as `bm25()`
//! counts it otherwise. A long-lived index also keeps the notes' sizes it read ([`Sizes`]).
//!
//! The cache ([`super::schema::CREATE_SEARCH_COUNTS`]) is keyed by FTS5's structure record:
//! every committed change to the full-text index writes a segment and so a new structure
//! record, whose write counter only grows (the index is never emptied in place: a rebuild is a
//! new file). A count stored with the structure record it was counted under is therefore the
//! count for any later reader that finds the same record.
//!
//! This module holds the crate's only `unsafe` code: FTS5's auxiliary functions are reached
//! through its C API, which rusqlite does not wrap.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::ptr;

use rusqlite::ffi::{self, Fts5Context, Fts5ExtensionApi};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, TransactionState};
use sha2::{Digest, Sha256};

use super::{Index, IndexError};

/// The constraint that makes a `notes_fts` query rank by [`rutter_bm25`]: `ORDER BY rank`
/// then orders by it.
pub(super) const RANKED_BY: &str = "rank MATCH 'rutter_bm25()'";

/// Most rows the cache keeps for one state of the index; past it, it starts again empty.
const MAX_ROWS: i64 = 4096;

/// FTS5's structure record's rowid in `<table>_data` (`FTS5_STRUCTURE_ROWID`).
const STRUCTURE_SQL: &str = "SELECT block FROM notes_fts_data WHERE id = 10";

/// A phrase's count of matching notes, and the phrase it was counted for: the SHA-256 of its
/// tokens, each as its length (4 bytes, little-endian) and its bytes. The cache keeps digests
/// only, so no query's text is written to the index.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Count {
    pub tokens: Vec<u8>,
    pub hits: i64,
}

/// The cache's key for a query term: its SHA-256.
fn term_key(term: &str) -> Vec<u8> {
    Sha256::digest(term.as_bytes()).to_vec()
}

/// What one query's ranking was given and what it counted, phrase by phrase (the query's
/// phrases are its terms, in order).
#[derive(Debug, Default)]
struct Plan {
    given: Vec<Option<Count>>,
    counted: Vec<(usize, Count)>,
    /// The notes' sizes known under the query's structure record; `None`: read each.
    sizes: Option<RowSizes>,
}

/// The notes' sizes by rowid (notes are numbered from 1 up, so a vector): -1 where not read.
/// A rowid past [`MAX_ROWID`] is never kept.
#[derive(Debug, Default)]
struct RowSizes(Vec<c_int>);

/// The highest rowid whose size is kept (8 MiB of sizes at most).
const MAX_ROWID: usize = 1 << 21;

impl RowSizes {
    fn get(&self, rowid: i64) -> Option<c_int> {
        let n = *self.0.get(usize::try_from(rowid).ok()?)?;
        (n >= 0).then_some(n)
    }

    fn insert(&mut self, rowid: i64, n: c_int) {
        let Some(i) = usize::try_from(rowid).ok().filter(|&i| i <= MAX_ROWID) else {
            return;
        };
        if i >= self.0.len() {
            self.0.resize(i + 1, -1);
        }
        self.0[i] = n;
    }
}

/// The notes' sizes in tokens (`xColumnSize(-1)`, one `docsize` row read per match), by rowid,
/// as read under one structure record. A long-lived index (the MCP server's) keeps them from
/// query to query, so a later query reads no size again: a note's size changes only with its
/// tokens, which is a new structure record.
#[derive(Debug, Default)]
pub(super) struct Sizes(std::sync::Mutex<Option<KeptSizes>>);

/// Sizes by rowid, and the structure record they were read under.
type KeptSizes = (Vec<u8>, RowSizes);

impl Sizes {
    /// The sizes kept for `structure`, taken out (empty for another structure).
    fn take_for(&self, structure: &[u8]) -> RowSizes {
        let Ok(mut kept) = self.0.lock() else {
            return RowSizes::default();
        };
        match kept.take() {
            Some((s, sizes)) if s == structure => sizes,
            _ => RowSizes::default(),
        }
    }

    fn put(&self, structure: Vec<u8>, sizes: RowSizes) {
        if let Ok(mut kept) = self.0.lock() {
            *kept = Some((structure, sizes));
        }
    }
}

thread_local! {
    /// The plan of the query running on this thread: the ranking function runs inside the
    /// statement's step, on the thread that steps it.
    static PLAN: RefCell<Option<Plan>> = const { RefCell::new(None) };
}

/// Clears this thread's plan however the query ends.
struct PlanGuard;

impl Drop for PlanGuard {
    fn drop(&mut self) {
        PLAN.with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                *p = None;
            }
        });
    }
}

/// Counts made by a query that ran inside a caller's read transaction, stored once it ends
/// ([`store_unstored`]): writing inside it would hold the write lock through the caller's
/// other reads.
#[derive(Debug, Default)]
pub(super) struct Unstored(std::sync::Mutex<Option<Counted>>);

/// Counts made under one structure record, by [`term_key`].
#[derive(Debug)]
pub(super) struct Counted {
    structure: Vec<u8>,
    rows: Vec<(Vec<u8>, Count)>,
}

/// Runs `query`, a statement over `notes_fts` ranked [`RANKED_BY`] whose phrases are `terms`
/// in order, with the cached counts of those terms; then stores the counts it made. A cache
/// that cannot be read or written (a read-only index, another writer) only means counting, as
/// `bm25()` does: the answer is the same.
pub(super) fn with_counts<T>(
    index: &Index,
    terms: &[String],
    query: impl FnOnce() -> Result<T, IndexError>,
) -> Result<T, IndexError> {
    let conn = &index.conn;
    if conn.transaction_state(Some(rusqlite::MAIN_DB))? == TransactionState::Write {
        // FTS5 may hold changes of this transaction the structure record does not show yet.
        return query();
    }
    // In one read transaction, so the structure record read is the state the query ranks:
    // the caller's, or one of our own.
    let own = conn
        .is_autocommit()
        .then(|| rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Deferred))
        .transpose()?;
    let structure: Option<Vec<u8>> = conn
        .prepare_cached(STRUCTURE_SQL)?
        .query_row([], |r| r.get(0))
        .optional()?;
    let given = match &structure {
        Some(s) => cached(conn, s, terms),
        None => vec![None; terms.len()],
    };
    let sizes = structure.as_ref().map(|s| index.sizes.take_for(s));
    let _guard = PlanGuard;
    PLAN.with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            *p = Some(Plan {
                given,
                counted: Vec::new(),
                sizes,
            });
        }
    });
    let out = query()?;
    let mut plan = PLAN.with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.take()));
    if let (Some(s), Some(sizes)) = (&structure, plan.as_mut().and_then(|p| p.sizes.take())) {
        index.sizes.put(s.clone(), sizes);
    }
    let counted = structure.zip(plan).map(|(structure, plan)| Counted {
        structure,
        rows: plan
            .counted
            .into_iter()
            .filter_map(|(i, c)| terms.get(i).map(|t| (term_key(t), c)))
            .collect(),
    });
    let counted = counted.filter(|c| !c.rows.is_empty());
    match own {
        Some(tx) => {
            tx.commit()?;
            if let Some(counted) = counted {
                store(conn, &counted);
            }
        }
        None => {
            if let (Some(counted), Ok(mut slot)) = (counted, index.unstored_counts.0.lock()) {
                *slot = Some(counted);
            }
        }
    }
    Ok(out)
}

/// Stores what a query inside the caller's transaction counted; called when it has ended.
pub(super) fn store_unstored(index: &Index) {
    let counted = index
        .unstored_counts
        .0
        .lock()
        .ok()
        .and_then(|mut slot| slot.take());
    if let Some(counted) = counted {
        store(&index.conn, &counted);
    }
}

/// The counts the cache holds for `terms` under `structure`; none when it cannot be read.
fn cached(conn: &Connection, structure: &[u8], terms: &[String]) -> Vec<Option<Count>> {
    let Ok(mut stmt) = conn.prepare_cached(
        "SELECT tokens, hits FROM search_counts WHERE term = ?1 AND structure = ?2",
    ) else {
        return vec![None; terms.len()]; // no cache yet
    };
    terms
        .iter()
        .map(|t| {
            stmt.query_row(rusqlite::params![term_key(t), structure], |r| {
                Ok(Count {
                    tokens: r.get(0)?,
                    hits: r.get(1)?,
                })
            })
            .ok()
        })
        .collect()
}

/// Stores `counted`, if the index is still in the state it was counted in, in a write
/// transaction that never waits for another writer. Best effort: a count not stored is
/// counted again next time.
fn store(conn: &Connection, counted: &Counted) {
    if conn.busy_timeout(std::time::Duration::ZERO).is_ok() {
        let _ = store_now(conn, counted);
    }
    let _ = conn.busy_timeout(super::BUSY_TIMEOUT);
}

fn store_now(conn: &Connection, counted: &Counted) -> Result<(), rusqlite::Error> {
    let structure = &counted.structure;
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let now: Option<Vec<u8>> = tx.query_row(STRUCTURE_SQL, [], |r| r.get(0)).optional()?;
    if now.as_ref() != Some(structure) {
        return Ok(()); // the index changed meanwhile: these counts are of the past
    }
    tx.execute_batch(super::schema::CREATE_SEARCH_COUNTS)?;
    tx.prepare_cached("DELETE FROM search_counts WHERE structure != ?1")?
        .execute([structure])?;
    let rows: i64 = tx
        .prepare_cached("SELECT count(*) FROM search_counts")?
        .query_row([], |r| r.get(0))?;
    if rows >= MAX_ROWS {
        tx.execute("DELETE FROM search_counts", [])?;
    }
    let mut insert = tx.prepare_cached(
        "INSERT OR REPLACE INTO search_counts(term, tokens, hits, structure) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (term, count) in &counted.rows {
        insert.execute(rusqlite::params![term, count.tokens, count.hits, structure])?;
    }
    drop(insert);
    tx.commit()
}

/// Registers `rutter_bm25` on `conn` as an FTS5 auxiliary function.
pub(super) fn register(conn: &Connection) -> Result<(), rusqlite::Error> {
    let api = fts5_api(conn)?;
    // SAFETY: `api` is the live `fts5_api` of `conn`'s database handle (checked non-null);
    // the name is a NUL-terminated static string; `rank` matches `fts5_extension_function`
    // and keeps no pointer past its call; no user data is passed, so nothing is to be freed.
    let rc = unsafe {
        match (*api).xCreateFunction {
            Some(create) => create(
                api,
                c"rutter_bm25".as_ptr(),
                ptr::null_mut(),
                Some(rank),
                None,
            ),
            None => ffi::SQLITE_MISUSE,
        }
    };
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None))
    }
}

/// The FTS5 API of `conn`'s database handle, as FTS5's documentation has it fetched: `SELECT
/// fts5(?1)` with a pointer bound of type `fts5_api_ptr`.
fn fts5_api(conn: &Connection) -> Result<*mut ffi::fts5_api, rusqlite::Error> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    // SAFETY: the handle is `conn`'s, used on this thread while `conn` is borrowed; the
    // statement is finalized before return; the pointer bound is to `api`, which outlives the
    // statement, and FTS5 writes one `fts5_api*` through it during the step.
    let rc = unsafe {
        let db = conn.handle();
        let mut stmt = ptr::null_mut();
        let mut rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc == ffi::SQLITE_OK {
            let out: *mut *mut ffi::fts5_api = &mut api;
            rc = ffi::sqlite3_bind_pointer(
                stmt,
                1,
                out.cast::<c_void>(),
                c"fts5_api_ptr".as_ptr(),
                None,
            );
            if rc == ffi::SQLITE_OK {
                rc = ffi::sqlite3_step(stmt);
                if rc == ffi::SQLITE_ROW || rc == ffi::SQLITE_DONE {
                    rc = ffi::SQLITE_OK;
                }
            }
        }
        ffi::sqlite3_finalize(stmt);
        rc
    };
    if rc != ffi::SQLITE_OK {
        return Err(rusqlite::Error::SqliteFailure(ffi::Error::new(rc), None));
    }
    if api.is_null() {
        return Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_MISUSE),
            Some("FTS5 gave no API".into()),
        ));
    }
    Ok(api)
}

/// bm25's constants, as FTS5 has them.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What one query's ranking works out once (FTS5's `Fts5Bm25Data`).
struct QueryData {
    avgdl: f64,
    idf: Vec<f64>,
    freq: Vec<f64>,
}

/// `rutter_bm25(notes_fts [, weight ...])`: `bm25()`'s score for the current row.
unsafe extern "C" fn rank(
    api: *const Fts5ExtensionApi,
    fts: *mut Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    n_val: c_int,
    ap_val: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 calls this with its live API and cursor, the function's context and
    // `n_val` argument values, for the duration of the call.
    unsafe {
        match score(&*api, fts, n_val, ap_val) {
            Ok(score) => ffi::sqlite3_result_double(ctx, -score),
            Err(rc) => ffi::sqlite3_result_error_code(ctx, rc),
        }
    }
}

/// An FTS5 API member, or `SQLITE_MISUSE` when this SQLite lacks it.
macro_rules! member {
    ($api:expr, $name:ident) => {
        $api.$name.ok_or(ffi::SQLITE_MISUSE)?
    };
}

/// `rc` as a result.
fn ok(rc: c_int) -> Result<(), c_int> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(rc)
    }
}

/// The current row's score, as `fts5Bm25Function` computes it.
///
/// # Safety
/// `api` and `fts` as FTS5 passes them to an auxiliary function; `ap_val` holds `n_val`
/// values.
unsafe fn score(
    api: &Fts5ExtensionApi,
    fts: *mut Fts5Context,
    n_val: c_int,
    ap_val: *mut *mut ffi::sqlite3_value,
) -> Result<f64, c_int> {
    // SAFETY: as the function's contract; the query data is ours, kept by FTS5 for the query.
    unsafe {
        let data = &mut *query_data(api, fts)?;
        data.freq.fill(0.0);
        let mut n_inst: c_int = 0;
        ok(member!(api, xInstCount)(fts, &mut n_inst))?;
        for i in 0..n_inst {
            let (mut ip, mut ic, mut io): (c_int, c_int, c_int) = (0, 0, 0);
            ok(member!(api, xInst)(fts, i, &mut ip, &mut ic, &mut io))?;
            let w = if n_val > ic && ic >= 0 {
                ffi::sqlite3_value_double(*ap_val.add(ic as usize))
            } else {
                1.0
            };
            if let Some(f) = usize::try_from(ip)
                .ok()
                .and_then(|ip| data.freq.get_mut(ip))
            {
                *f += w;
            }
        }
        let d = f64::from(row_size(api, fts)?);
        let mut score = 0.0;
        for (idf, f) in data.idf.iter().zip(&data.freq) {
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / data.avgdl)));
        }
        Ok(score)
    }
}

/// The current row's size in tokens: known to this thread's plan, or read (and told to it).
///
/// # Safety
/// As [`score`].
unsafe fn row_size(api: &Fts5ExtensionApi, fts: *mut Fts5Context) -> Result<c_int, c_int> {
    // SAFETY: as the function's contract.
    let rowid = unsafe { member!(api, xRowid)(fts) };
    let known = PLAN.with(|p| {
        let p = p.try_borrow().ok()?;
        p.as_ref()?.sizes.as_ref()?.get(rowid)
    });
    if let Some(n) = known {
        return Ok(n);
    }
    let mut n: c_int = 0;
    // SAFETY: as the function's contract.
    ok(unsafe { member!(api, xColumnSize)(fts, -1, &mut n) })?;
    PLAN.with(|p| {
        if let Ok(mut p) = p.try_borrow_mut() {
            if let Some(sizes) = p.as_mut().and_then(|p| p.sizes.as_mut()) {
                sizes.insert(rowid, n);
            }
        }
    });
    Ok(n)
}

/// This query's [`QueryData`], worked out on its first row and kept as FTS5's aux data.
///
/// # Safety
/// As [`score`].
unsafe fn query_data(
    api: &Fts5ExtensionApi,
    fts: *mut Fts5Context,
) -> Result<*mut QueryData, c_int> {
    // SAFETY: as the function's contract. The aux data slot holds only what this function
    // put there: a `Box<QueryData>` freed by `free_query_data`.
    unsafe {
        let kept = member!(api, xGetAuxdata)(fts, 0).cast::<QueryData>();
        if !kept.is_null() {
            return Ok(kept);
        }
        let n_phrase = member!(api, xPhraseCount)(fts);
        let mut n_row: i64 = 0;
        ok(member!(api, xRowCount)(fts, &mut n_row))?;
        let mut n_token: i64 = 0;
        ok(member!(api, xColumnTotalSize)(fts, -1, &mut n_token))?;
        let avgdl = n_token as f64 / n_row as f64;
        let hits = phrase_hits(api, fts, n_phrase)?;
        let idf = hits
            .iter()
            .map(|&n_hit| {
                let idf = (((n_row - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
                if idf <= 0.0 {
                    1e-6
                } else {
                    idf
                }
            })
            .collect();
        let data = Box::into_raw(Box::new(QueryData {
            avgdl,
            idf,
            freq: vec![0.0; hits.len()],
        }));
        // On failure FTS5 frees what it was given, with the function given.
        ok(member!(api, xSetAuxdata)(
            fts,
            data.cast(),
            Some(free_query_data),
        ))?;
        Ok(data)
    }
}

unsafe extern "C" fn free_query_data(p: *mut c_void) {
    if !p.is_null() {
        // SAFETY: `p` is the `Box<QueryData>` `query_data` handed to FTS5, freed once.
        drop(unsafe { Box::from_raw(p.cast::<QueryData>()) });
    }
}

/// Each phrase's number of matching rows: given by this thread's plan when its tokens are the
/// phrase's, else counted (and noted in the plan to be stored).
///
/// # Safety
/// As [`score`].
unsafe fn phrase_hits(
    api: &Fts5ExtensionApi,
    fts: *mut Fts5Context,
    n_phrase: c_int,
) -> Result<Vec<i64>, c_int> {
    let given = PLAN.with(|p| {
        p.try_borrow()
            .ok()
            .and_then(|p| p.as_ref().map(|p| p.given.clone()))
    });
    // A plan speaks of a query whose phrases are its terms: one each, in order.
    let given = given.filter(|g| g.len() == usize::try_from(n_phrase).unwrap_or(0));
    let mut hits = Vec::new();
    let mut counted = Vec::new();
    for i in 0..n_phrase {
        // SAFETY: as the function's contract.
        let tokens = match &given {
            Some(_) => unsafe { phrase_digest(api, fts, i)? },
            None => None,
        };
        let known = given
            .as_ref()
            .and_then(|g| g.get(i as usize).cloned().flatten())
            .filter(|k| Some(&k.tokens) == tokens.as_ref());
        let n_hit = match known {
            Some(k) => k.hits,
            None => {
                // SAFETY: as the function's contract.
                let n = unsafe { count_phrase(api, fts, i)? };
                if let Some(tokens) = tokens {
                    counted.push((i as usize, Count { tokens, hits: n }));
                }
                n
            }
        };
        hits.push(n_hit);
    }
    if !counted.is_empty() {
        PLAN.with(|p| {
            if let Some(plan) = p
                .try_borrow_mut()
                .ok()
                .as_deref_mut()
                .and_then(Option::as_mut)
            {
                plan.counted.extend(counted);
            }
        });
    }
    Ok(hits)
}

/// The digest of phrase `i`'s tokens as the query parsed them ([`Count`]); `None` on an SQLite
/// without `xQueryToken`.
///
/// # Safety
/// As [`score`].
unsafe fn phrase_digest(
    api: &Fts5ExtensionApi,
    fts: *mut Fts5Context,
    i: c_int,
) -> Result<Option<Vec<u8>>, c_int> {
    let Some(query_token) = api.xQueryToken.filter(|_| api.iVersion >= 3) else {
        return Ok(None);
    };
    // SAFETY: as the function's contract; each token FTS5 gives is `len` readable bytes, valid
    // for the query, copied at once.
    unsafe {
        let n = member!(api, xPhraseSize)(fts, i);
        let mut key = Sha256::new();
        for t in 0..n {
            let (mut p, mut len): (*const std::ffi::c_char, c_int) = (ptr::null(), 0);
            ok(query_token(fts, i, t, &mut p, &mut len))?;
            let len = usize::try_from(len).map_err(|_| ffi::SQLITE_CORRUPT)?;
            let bytes = if p.is_null() {
                &[][..]
            } else {
                std::slice::from_raw_parts(p.cast::<u8>(), len)
            };
            key.update(
                u32::try_from(len)
                    .map_err(|_| ffi::SQLITE_TOOBIG)?
                    .to_le_bytes(),
            );
            key.update(bytes);
        }
        Ok(Some(key.finalize().to_vec()))
    }
}

/// Phrase `i`'s number of matching rows, counted as `bm25()` counts it.
///
/// # Safety
/// As [`score`].
unsafe fn count_phrase(
    api: &Fts5ExtensionApi,
    fts: *mut Fts5Context,
    i: c_int,
) -> Result<i64, c_int> {
    let mut n: i64 = 0;
    // SAFETY: as the function's contract; the callback is given `n`, which outlives the call.
    unsafe {
        ok(member!(api, xQueryPhrase)(
            fts,
            i,
            (&mut n as *mut i64).cast(),
            Some(count_row),
        ))?;
    }
    Ok(n)
}

unsafe extern "C" fn count_row(
    _api: *const Fts5ExtensionApi,
    _fts: *mut Fts5Context,
    user: *mut c_void,
) -> c_int {
    // SAFETY: `user` is the `i64` `count_phrase` passed, alive for the call.
    unsafe { *user.cast::<i64>() += 1 };
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An index over an empty vault, its notes put straight into `notes_fts`.
    fn index_of(dir: &std::path::Path, docs: &[&str]) -> Index {
        let index = Index::in_memory(dir);
        for (i, d) in docs.iter().enumerate() {
            add(&index, i as i64 + 1, d);
        }
        index
    }

    fn add(index: &Index, rowid: i64, body: &str) {
        index
            .conn
            .execute(
                "INSERT INTO notes_fts(rowid, path, title, body, tags) VALUES (?1, ?2, '', ?3, '')",
                rusqlite::params![rowid, format!("n{rowid}.md"), body],
            )
            .unwrap();
    }

    fn quoted(terms: &[&str]) -> (Vec<String>, String) {
        let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
        let q = terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" ");
        (terms, q)
    }

    /// Each match's (rowid, score bits) by FTS5's `bm25()`.
    fn by_bm25(index: &Index, q: &str) -> Vec<(i64, u64)> {
        let mut stmt = index
            .conn
            .prepare("SELECT rowid, bm25(notes_fts) FROM notes_fts WHERE notes_fts MATCH ?1 ORDER BY rowid")
            .unwrap();
        let rows = stmt.query_map([q], |r| Ok((r.get(0)?, r.get::<_, f64>(1)?.to_bits())));
        rows.unwrap().map(Result::unwrap).collect()
    }

    /// The same by `rutter_bm25`, through the cache.
    fn by_ours(index: &Index, terms: &[String], q: &str) -> Vec<(i64, u64)> {
        with_counts(index, terms, || {
            let mut stmt = index.conn.prepare(&format!(
                "SELECT rowid, rank FROM notes_fts WHERE notes_fts MATCH ?1 AND {RANKED_BY} ORDER BY rowid"
            ))?;
            let rows = stmt.query_map([q], |r| Ok((r.get(0)?, r.get::<_, f64>(1)?.to_bits())))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .unwrap()
    }

    /// The cache's rows as (term, hits), for the terms given.
    fn stored(index: &Index, terms: &[&str]) -> Vec<(String, i64)> {
        let mut stmt = index
            .conn
            .prepare("SELECT term, hits FROM search_counts")
            .unwrap();
        let rows = stmt.query_map([], |r| Ok((r.get::<_, Vec<u8>>(0)?, r.get(1)?)));
        let mut rows: Vec<(String, i64)> = rows
            .unwrap()
            .map(Result::unwrap)
            .map(|(key, hits)| {
                let term = terms
                    .iter()
                    .find(|t| term_key(t) == key)
                    .expect("a term's key");
                (term.to_string(), hits)
            })
            .collect();
        rows.sort();
        rows
    }

    #[test]
    fn counts_are_stored_used_and_renewed_when_the_notes_change() {
        let t = tempfile::tempdir().unwrap();
        let index = index_of(
            t.path(),
            &["alpha beta", "alpha gamma gamma", "beta delta", "alpha"],
        );
        let (terms, q) = quoted(&["alpha", "beta"]);
        assert_eq!(by_ours(&index, &terms, &q), by_bm25(&index, &q));
        assert_eq!(
            stored(&index, &["alpha", "beta"]),
            [("alpha".into(), 3), ("beta".into(), 2)]
        );
        // A count the cache holds is used: planted wrong, it changes the score.
        index
            .conn
            .execute(
                "UPDATE search_counts SET hits = 1 WHERE term = ?1",
                [term_key("alpha")],
            )
            .unwrap();
        assert_ne!(by_ours(&index, &terms, &q), by_bm25(&index, &q));
        // A size the index keeps is used too: planted wrong, it changes the score.
        index
            .conn
            .execute(
                "UPDATE search_counts SET hits = 3 WHERE term = ?1",
                [term_key("alpha")],
            )
            .unwrap();
        assert_eq!(by_ours(&index, &terms, &q), by_bm25(&index, &q));
        if let Ok(mut kept) = index.sizes.0.lock() {
            let (_, sizes) = kept.as_mut().expect("sizes kept");
            assert_eq!(sizes.get(1), Some(2), "note 1 holds two tokens");
            sizes.insert(1, 40);
        }
        assert_ne!(by_ours(&index, &terms, &q), by_bm25(&index, &q));
        // A change to the notes is a new structure record: the planted count is of the past.
        add(&index, 9, "alpha beta beta");
        assert_eq!(by_ours(&index, &terms, &q), by_bm25(&index, &q));
        assert_eq!(
            stored(&index, &["alpha", "beta"]),
            [("alpha".into(), 4), ("beta".into(), 3)]
        );
    }

    #[test]
    fn a_count_for_other_tokens_or_inside_a_write_is_not_used() {
        let t = tempfile::tempdir().unwrap();
        let index = index_of(
            t.path(),
            &["alpha beta", "alpha gamma", "beta delta", "gamma"],
        );
        let (terms, q) = quoted(&["alpha", "gamma"]);
        by_ours(&index, &terms, &q);
        // The term now names other tokens than the phrase FTS5 parsed: counted again.
        index
            .conn
            .execute(
                "UPDATE search_counts SET hits = 1, tokens = (SELECT tokens FROM search_counts WHERE term = ?2) WHERE term = ?1",
                [term_key("alpha"), term_key("gamma")],
            )
            .unwrap();
        assert_eq!(by_ours(&index, &terms, &q), by_bm25(&index, &q));
        // Inside a write transaction FTS5 may hold changes the structure record does not show.
        index
            .conn
            .execute("UPDATE search_counts SET hits = 1", [])
            .unwrap();
        index.conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        add(&index, 7, "alpha alpha");
        assert_eq!(by_ours(&index, &terms, &q), by_bm25(&index, &q));
        index.conn.execute_batch("COMMIT").unwrap();
    }

    #[test]
    fn counts_made_inside_a_read_transaction_are_stored_when_it_ends() {
        let t = tempfile::tempdir().unwrap();
        let index = index_of(t.path(), &["alpha beta", "beta"]);
        let (terms, q) = quoted(&["beta"]);
        index
            .read(|index| {
                assert_eq!(by_ours(index, &terms, &q), by_bm25(index, &q));
                assert!(!index.conn.is_autocommit());
                Ok(())
            })
            .unwrap();
        assert_eq!(stored(&index, &["beta"]), [("beta".into(), 2)]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Cold and warm, `rutter_bm25` gives every match `bm25()`'s score, bit for bit.
        #[test]
        fn scores_are_bm25s_to_the_bit(
            docs in proptest::collection::vec(
                proptest::collection::vec(prop::sample::select(vec!["alpha", "beta", "gamma", "delta", "runs", "running"]), 0..12),
                1..24),
            query in proptest::collection::vec(prop::sample::select(vec!["alpha", "beta", "gamma", "run", "alpha beta", "gamma delta"]), 1..4),
        ) {
            let t = tempfile::tempdir().unwrap();
            let docs: Vec<String> = docs.iter().map(|d| d.join(" ")).collect();
            let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
            let index = index_of(t.path(), &docs);
            let mut words: Vec<&str> = Vec::new();
            for w in query {
                if !words.contains(&w) {
                    words.push(w);
                }
            }
            let (terms, q) = quoted(&words);
            let want = by_bm25(&index, &q);
            prop_assert_eq!(&by_ours(&index, &terms, &q), &want);
            prop_assert_eq!(&by_ours(&index, &terms, &q), &want);
        }
    }
}
