//! Writing many new blobs as one pack (the adoption commit's thousands of day files).
//!
//! libgit2 writes each object as a loose file: a temporary file, a link, a `utimensat` and a
//! rescan of `objects/pack/` per object, so adopting a ten-year vault's thousands of day files
//! took seconds (docs/performance.md). Here each blob becomes one entry of a version-2 pack as
//! it is read (the entry header, then the bytes as a zlib stream, deflated by libdeflate at
//! level 1: 1.7 times as fast as zlib's level 1 and no larger, docs/performance.md), never a
//! delta, so there is no delta search (what made libgit2's own pack builder slower than loose
//! objects). The pack's index (version 2) is written here too: everything it holds (each id,
//! the CRC-32 of each entry, its offset, the pack's SHA-1) is known as the entries are written,
//! whereas libgit2's indexer (`Odb::packwriter`) would inflate and hash every object again with
//! collision-detecting SHA-1, a large part of the adoption's CPU. Ids are git's: plain
//! SHA-1 of `blob <len>\0` and the bytes (for a crafted SHA-1 collision git's own hash differs
//! or refuses; `git fsck` would then name the blob), checked by `git verify-pack` and
//! `git fsck --strict` in the tests.
//!
//! Both files are written under temporary names in `objects/pack/` and renamed into place, the
//! pack first and its index last (git and libgit2 find packs by their index). Deflating runs
//! on a thread of its own; when that thread is behind (its queue is full), the caller deflates
//! the blob itself rather than wait, so both cores deflate. Memory stays flat: a few blobs and
//! two deflated copies at a time, plus 32 bytes of index per object.

use super::oid::ToGit;
use super::StoreError;
use crate::objectid::ObjectId;
use git2::Repository;
use libdeflater::{CompressionLvl, Compressor};
use sha1::{Digest, Sha1};
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::thread::JoinHandle;
use tempfile::NamedTempFile;

/// The pack entry type of a blob (git's `OBJ_BLOB`).
const OBJ_BLOB: u8 = 3;

/// What the index says of one entry.
pub(super) struct Indexed {
    pub id: ObjectId,
    pub crc: u32,
    pub offset: u64,
}

/// The first four bytes of a pack index of version 2 or later (`store::packread` reads them).
pub(super) const INDEX_MAGIC: [u8; 4] = *b"\xfftOc";

/// How many blobs wait for the writer before the caller deflates the next one itself.
const QUEUE: usize = 8;

/// A blob on its way to the writer: as read, or already deflated by the caller (with its size).
enum Blob {
    Read(ObjectId, Vec<u8>),
    Deflated(ObjectId, u64, Vec<u8>),
}

/// Blobs on their way into one pack. Deflating is most of the cost, so it runs on a thread of
/// its own while the caller reads the next file (the channel is bounded: memory stays flat),
/// and the caller deflates a blob itself when the writer is behind.
pub(crate) struct BlobPack {
    dir: PathBuf,
    /// Ids added so far, each sent to the writer once: an index may not name an object twice.
    ids: HashSet<ObjectId>,
    to_writer: Option<SyncSender<Blob>>,
    writer: Option<JoinHandle<io::Result<Entries>>>,
    /// The caller's own compressor, made the first time the writer is behind.
    here: Option<EntryWriter>,
}

/// The pack being written (its header still to be completed) and what its index will say.
struct Entries {
    pack: BufWriter<NamedTempFile>,
    /// Where the next entry starts (after the 12-byte header).
    offset: u64,
    objects: Vec<Indexed>,
    entry: EntryWriter,
}

impl Entries {
    fn write(&mut self, blob: Blob) -> io::Result<()> {
        let (id, (crc, len)) = match blob {
            Blob::Read(id, bytes) => (id, self.entry.write_blob(&mut self.pack, &bytes)?),
            Blob::Deflated(id, size, deflated) => {
                (id, write_entry(&mut self.pack, size, &deflated)?)
            }
        };
        self.objects.push(Indexed {
            id,
            crc,
            offset: self.offset,
        });
        self.offset += len;
        Ok(())
    }
}

impl BlobPack {
    /// An empty pack in `repo`'s `objects/pack/`, under a temporary name until [`Self::finish`].
    pub fn new(repo: &Repository) -> Result<BlobPack, StoreError> {
        BlobPack::with_queue(repo, QUEUE)
    }

    /// [`BlobPack::new`] with `queue` blobs waiting at most (0: the caller deflates every blob
    /// the writer is not waiting for at that moment).
    fn with_queue(repo: &Repository, queue: usize) -> Result<BlobPack, StoreError> {
        let dir = repo.commondir().join("objects").join("pack");
        std::fs::create_dir_all(&dir)?;
        let mut entries = Entries {
            pack: BufWriter::with_capacity(256 * 1024, temp_in(&dir)?),
            offset: 12,
            objects: Vec::new(),
            entry: EntryWriter::new(),
        };
        // The object count is not known yet: `finish` writes the real header over this one.
        entries.pack.write_all(&pack_header(0))?;
        let (to_writer, blobs) = sync_channel::<Blob>(queue);
        let writer = std::thread::Builder::new()
            .name("rutter-pack".into())
            .spawn(move || {
                for blob in blobs {
                    entries.write(blob)?;
                }
                Ok(entries)
            })?;
        Ok(BlobPack {
            dir,
            ids: HashSet::new(),
            to_writer: Some(to_writer),
            writer: Some(writer),
            here: None,
        })
    }

    /// Adds a blob (once, however often it is added) and returns its id, which is git's.
    pub fn add(&mut self, bytes: &[u8]) -> Result<ObjectId, StoreError> {
        let id = blob_id(bytes);
        if self.ids.insert(id) && !self.send(id, bytes) {
            // The writer stopped: its error says why.
            return Err(match self.join() {
                Err(e) => e,
                Ok(_) => git2::Error::from_str("the pack writer stopped").into(),
            });
        }
        Ok(id)
    }

    /// Hands a blob to the writer, deflated here first when the writer is behind; whether the
    /// writer took it.
    fn send(&mut self, id: ObjectId, bytes: &[u8]) -> bool {
        let Some(w) = self.to_writer.as_ref() else {
            return false;
        };
        match w.try_send(Blob::Read(id, bytes.to_vec())) {
            Ok(()) => true,
            Err(TrySendError::Disconnected(_)) => false,
            Err(TrySendError::Full(read)) => {
                let here = self.here.get_or_insert_with(EntryWriter::new);
                let blob = match here.deflate(bytes) {
                    Ok(()) => {
                        let deflated = std::mem::take(&mut here.deflated);
                        Blob::Deflated(id, bytes.len() as u64, deflated)
                    }
                    // The writer deflates it, and says why if it cannot either.
                    Err(_) => read,
                };
                w.send(blob).is_ok()
            }
        }
    }

    /// Closes the channel and waits for the writer.
    fn join(&mut self) -> Result<Entries, StoreError> {
        self.to_writer = None;
        match self.writer.take().map(JoinHandle::join) {
            Some(Ok(Ok(entries))) => Ok(entries),
            Some(Ok(Err(e))) => Err(e.into()),
            Some(Err(_)) | None => Err(git2::Error::from_str("the pack writer failed").into()),
        }
    }

    /// Completes the pack (header, SHA-1 trailer), writes its index and moves both into place;
    /// then checks that libgit2 finds every added blob. Nothing is kept when nothing was added.
    pub fn finish(mut self, repo: &Repository) -> Result<(), StoreError> {
        let Entries {
            pack, mut objects, ..
        } = self.join()?;
        if objects.is_empty() {
            return Ok(());
        }
        let count = u32::try_from(objects.len())
            .map_err(|_| git2::Error::from_str("too many objects for one pack"))?;
        let mut pack = pack.into_inner().map_err(|e| e.into_error())?;
        pack.seek(SeekFrom::Start(0))?;
        pack.write_all(&pack_header(count))?;
        pack.seek(SeekFrom::Start(0))?;
        let checksum = sha1_of(pack.as_file_mut())?;
        pack.seek(SeekFrom::End(0))?;
        pack.write_all(&checksum)?;
        let mut idx = BufWriter::new(temp_in(&self.dir)?);
        write_index(&mut idx, &mut objects, &checksum)?;
        let idx = idx.into_inner().map_err(|e| e.into_error())?;
        let name = format!("pack-{}", crate::records::fingerprint::hex(&checksum));
        // Not fsynced, like the loose objects libgit2 writes for the commit and its trees.
        for (file, ext) in [(pack, "pack"), (idx, "idx")] {
            read_only(file.as_file())?;
            file.persist(self.dir.join(format!("{name}.{ext}")))
                .map_err(|e| e.error)?;
        }
        let odb = repo.odb()?;
        odb.refresh()?;
        if let Some(missing) = objects.iter().find(|o| !odb.exists(o.id.to_git())) {
            return Err(git2::Error::from_str(&format!(
                "the adoption pack {name} does not hold blob {}",
                missing.id
            ))
            .into());
        }
        Ok(())
    }
}

impl Drop for BlobPack {
    /// A pack left unfinished (an adoption that failed) is removed with its writer's temporary
    /// file, before the process can exit and leave it behind.
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// A temporary file in `dir` named as git names its own (`git gc` removes stale ones).
fn temp_in(dir: &std::path::Path) -> io::Result<NamedTempFile> {
    tempfile::Builder::new()
        .prefix("tmp_pack_")
        .tempfile_in(dir)
}

/// Packs and indexes are read-only and readable by all (`0444`), as libgit2 makes them (a
/// temporary file is created `0600`).
fn read_only(file: &File) -> io::Result<()> {
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o444))
}

/// The SHA-1 of everything `file` holds from its current position on.
fn sha1_of(file: &mut File) -> io::Result<[u8; 20]> {
    let mut sha = Sha1::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(sha.finalize().into()),
            Ok(n) => sha.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// A version-2 pack index: magic and version, the fan-out table, the sorted ids, their CRC-32s,
/// their offsets (31 bits, or an index into a table of 64-bit offsets), the pack's SHA-1 and
/// the index's own.
pub(super) fn write_index(
    out: &mut impl Write,
    objects: &mut [Indexed],
    pack_sha: &[u8],
) -> io::Result<()> {
    objects.sort_by_key(|o| o.id);
    let mut out = Hashed::new(out);
    out.write_all(&INDEX_MAGIC)?;
    out.write_all(&2u32.to_be_bytes())?;
    let mut fanout = [0u32; 256];
    for o in objects.iter() {
        fanout[o.id.as_bytes()[0] as usize] += 1;
    }
    let mut total = 0u32;
    for n in fanout {
        total += n;
        out.write_all(&total.to_be_bytes())?;
    }
    for o in objects.iter() {
        out.write_all(o.id.as_bytes())?;
    }
    for o in objects.iter() {
        out.write_all(&o.crc.to_be_bytes())?;
    }
    let mut large = Vec::new();
    for o in objects.iter() {
        let small = match u32::try_from(o.offset) {
            Ok(v) if v < 0x8000_0000 => v,
            _ => {
                large.push(o.offset);
                0x8000_0000 | (large.len() as u32 - 1)
            }
        };
        out.write_all(&small.to_be_bytes())?;
    }
    for o in large {
        out.write_all(&o.to_be_bytes())?;
    }
    out.write_all(pack_sha)?;
    out.finish()
}

/// Git's id of a blob ([`crate::records::fingerprint::blob_sha1`]).
fn blob_id(bytes: &[u8]) -> ObjectId {
    ObjectId::from_bytes(crate::records::fingerprint::blob_sha1(bytes))
}

/// `PACK`, version 2, the number of entries (big-endian).
fn pack_header(count: u32) -> [u8; 12] {
    let mut header = [0u8; 12];
    header[..4].copy_from_slice(b"PACK");
    header[4..8].copy_from_slice(&2u32.to_be_bytes());
    header[8..].copy_from_slice(&count.to_be_bytes());
    header
}

/// An entry's header: the type in bits 4-6 of the first byte, the inflated size in its low four
/// bits and then seven bits a byte, least significant first, the top bit saying "more".
fn entry_header(kind: u8, size: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(10);
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest > 0 {
        out.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(byte);
    out
}

/// Writes whole-object pack entries, reusing one compressor and one output buffer.
struct EntryWriter {
    zlib: Compressor,
    deflated: Vec<u8>,
}

impl EntryWriter {
    fn new() -> EntryWriter {
        // Level 1, libdeflate's fastest that compresses (0 stores).
        let level = CompressionLvl::new(1).unwrap_or_default();
        EntryWriter {
            zlib: Compressor::new(level),
            deflated: Vec::new(),
        }
    }

    /// Writes one blob's entry; returns its CRC-32 (as the index keeps it) and length.
    fn write_blob(&mut self, out: &mut impl Write, bytes: &[u8]) -> io::Result<(u32, u64)> {
        self.deflate(bytes)?;
        write_entry(out, bytes.len() as u64, &self.deflated)
    }

    /// `bytes` as one complete zlib stream in `self.deflated` (a buffer of the bound libdeflate
    /// gives always holds it).
    fn deflate(&mut self, bytes: &[u8]) -> io::Result<()> {
        let bound = self.zlib.zlib_compress_bound(bytes.len());
        self.deflated.resize(bound, 0);
        let written = self
            .zlib
            .zlib_compress(bytes, &mut self.deflated)
            .map_err(io::Error::other)?;
        self.deflated.truncate(written);
        Ok(())
    }
}

/// Writes the entry of a blob of `size` bytes, `deflated` as one zlib stream; returns its CRC-32
/// (as the index keeps it) and length.
fn write_entry(out: &mut impl Write, size: u64, deflated: &[u8]) -> io::Result<(u32, u64)> {
    let header = entry_header(OBJ_BLOB, size);
    out.write_all(&header)?;
    out.write_all(deflated)?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&header);
    crc.update(deflated);
    Ok((crc.finalize(), (header.len() + deflated.len()) as u64))
}

/// A writer that also hashes what passes through it, for a SHA-1 trailer.
struct Hashed<'w, W: Write> {
    inner: &'w mut W,
    sha: Sha1,
}

impl<'w, W: Write> Hashed<'w, W> {
    fn new(inner: &'w mut W) -> Self {
        Hashed {
            inner,
            sha: Sha1::new(),
        }
    }

    /// Writes the trailer: the SHA-1 of everything written before it.
    fn finish(self) -> io::Result<()> {
        self.inner.write_all(&self.sha.finalize())
    }
}

impl<W: Write> Write for Hashed<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::oid::ToId;
    use git2::ObjectType;
    use proptest::prelude::*;

    fn repo() -> (tempfile::TempDir, Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        (dir, repo)
    }

    /// Writes `blobs` as one pack and checks each id and each blob's bytes against libgit2.
    fn round_trip(blobs: &[Vec<u8>]) -> tempfile::TempDir {
        round_trip_queued(blobs, QUEUE)
    }

    /// [`round_trip`] with `queue` blobs waiting for the writer at most (0: most blobs are
    /// deflated by the caller, the writer taking only those it is waiting for).
    fn round_trip_queued(blobs: &[Vec<u8>], queue: usize) -> tempfile::TempDir {
        let (dir, repo) = repo();
        let mut pack = BlobPack::with_queue(&repo, queue).unwrap();
        let ids: Vec<ObjectId> = blobs.iter().map(|b| pack.add(b).unwrap()).collect();
        pack.finish(&repo).unwrap();
        for (bytes, id) in blobs.iter().zip(&ids) {
            assert_eq!(
                *id,
                git2::Oid::hash_object(ObjectType::Blob, bytes)
                    .unwrap()
                    .to_id()
            );
            assert_eq!(repo.find_blob(id.to_git()).unwrap().content(), &bytes[..]);
        }
        let objects = dir.path().join(".git/objects");
        let packs: Vec<_> = std::fs::read_dir(objects.join("pack"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        for name in &packs {
            use std::os::unix::fs::PermissionsExt;
            let meta = std::fs::metadata(objects.join("pack").join(name)).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, 0o444, "{name}");
        }
        let expected = if blobs.is_empty() { 0 } else { 2 };
        assert_eq!(packs.len(), expected, "one .pack and its .idx: {packs:?}");
        let loose = std::fs::read_dir(&objects)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().len() == 2)
            .count();
        assert_eq!(loose, 0, "no loose object was written");
        dir
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Any blobs (repeated ones included) come back byte for byte under git's own ids.
        #[test]
        fn packed_blobs_read_back_under_gits_ids(
            blobs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..3000), 0..8)
        ) {
            let mut with_repeat = blobs.clone();
            if let Some(first) = blobs.first() {
                with_repeat.push(first.clone());
            }
            round_trip(&with_repeat);
            round_trip_queued(&with_repeat, 0);
        }

        /// The entry header is the size git's pack reader decodes.
        #[test]
        fn entry_headers_decode_to_the_size(size in any::<u64>()) {
            let h = entry_header(OBJ_BLOB, size);
            prop_assert_eq!((h[0] >> 4) & 7, OBJ_BLOB);
            let mut decoded = u64::from(h[0] & 0x0f);
            let mut shift = 4;
            for b in &h[1..] {
                decoded |= u64::from(b & 0x7f) << shift;
                shift += 7;
            }
            prop_assert_eq!(decoded, size);
            prop_assert!(h[..h.len() - 1].iter().all(|b| b & 0x80 != 0));
            prop_assert_eq!(h[h.len() - 1] & 0x80, 0);
        }
    }

    #[test]
    fn the_empty_blob_and_blobs_over_64_kib_round_trip() {
        // Pseudo-random bytes do not compress, so the deflated stream outgrows its first buffer.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let noise: Vec<u8> = (0..300_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let text = b"- 10:00:00 a line of a day file\n".repeat(4000);
        let blobs = [Vec::new(), noise, text, vec![0u8; 70_000]];
        // The writer deflating them, and the caller deflating most of them (its queue full).
        for queue in [QUEUE, 0] {
            let dir = round_trip_queued(&blobs, queue);
            let pack = dir.path().join(".git/objects/pack");
            let idx = std::fs::read_dir(&pack)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|x| x == "idx"))
                .unwrap();
            let out = std::process::Command::new("git")
                .args(["verify-pack", "-v"])
                .arg(&idx)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            assert!(String::from_utf8_lossy(&out.stdout).contains("non delta: 4 objects"));
        }
    }

    #[test]
    fn an_unfinished_pack_leaves_nothing_behind() {
        let (dir, repo) = repo();
        let mut pack = BlobPack::new(&repo).unwrap();
        pack.add(b"never committed").unwrap();
        drop(pack);
        let left = std::fs::read_dir(dir.path().join(".git/objects/pack")).unwrap();
        assert_eq!(left.count(), 0);
    }

    #[test]
    fn nothing_added_writes_no_pack() {
        round_trip(&[]);
    }
}
