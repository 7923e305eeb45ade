//! The other side of an interleaved A/B: `RUTTER_BENCH_BASE` names either a `git-rutter` binary
//! or a git revision of this repository (`main`, `HEAD~1`, a commit id). A revision is built
//! once, as a release binary, from a `git archive` of that commit into
//! `<target>/rutter-bench/base/<commit>/`, and reused by every later run and every bench; the
//! build's output goes to `build.log` beside it.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The variable naming the base.
pub const VAR: &str = "RUTTER_BENCH_BASE";

/// The base binary `RUTTER_BENCH_BASE` names (building it when it names a revision), or `None`
/// when it is unset. Panics with the reason when it names neither a binary nor a revision, or
/// the revision does not build: a bench asked for an A/B must not quietly run without one.
pub fn binary(bench_root: &Path) -> Option<PathBuf> {
    let named = std::env::var_os(VAR)?;
    let as_path = PathBuf::from(&named);
    if as_path.is_file() {
        return Some(as_path);
    }
    let rev = named.to_string_lossy().into_owned();
    let commit = resolve(&rev)
        .unwrap_or_else(|| panic!("{VAR}={rev}: neither a file nor a revision of this repository"));
    let dir = bench_root.join("base").join(&commit);
    let bin = dir.join("git-rutter");
    if !bin.is_file() {
        println!(
            "building the base {rev} ({commit}) once, into {}",
            dir.display()
        );
        build(&commit, &dir);
    }
    println!("A/B against {rev} ({commit}): {}", bin.display());
    Some(bin)
}

/// The binaries an A/B compares, this build's first: with `RUTTER_BENCH_BASE`, this working
/// tree built as the base is ([`this_binary`]) and the base; without it, the binary `cargo
/// bench` built.
pub fn builds(bench_root: &Path) -> Vec<PathBuf> {
    match binary(bench_root) {
        Some(base) => vec![this_binary(bench_root), base],
        None => vec![PathBuf::from(super::BIN)],
    }
}

/// This working tree's `git-rutter`, built for an A/B as the base is built (`cargo build
/// --release --locked`, into the base's target folder): the binary `cargo bench` builds has the
/// dev-dependencies' features too (tokio's `process`, rmcp's client), so it is another program
/// than the base, and its A/B rows read up to a quarter slower with no code of theirs changed
/// (docs/performance.md, "Stop 50"). Rebuilt by every A/B run (incrementally), into
/// `<bench root>/base/this/`.
pub fn this_binary(bench_root: &Path) -> PathBuf {
    let dir = bench_root.join("base").join("this");
    fs::create_dir_all(&dir).expect("create base/this");
    println!(
        "building this working tree as the base is built, into {}",
        dir.display()
    );
    cargo_build(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &dir,
        "this working tree",
    );
    dir.join("git-rutter")
}

/// The full commit id `rev` names in this repository.
fn resolve(rev: &str) -> Option<String> {
    let out = git()
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])
        .output()
        .ok()?;
    let id = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !id.is_empty()).then_some(id)
}

/// Builds `commit`'s release binary into `dir/git-rutter` (sources unpacked to `dir/src-tree`,
/// removed after; the target folder is kept for the next revision's incremental build).
fn build(commit: &str, dir: &Path) {
    let tree = dir.join("src-tree");
    let _ = fs::remove_dir_all(&tree);
    fs::create_dir_all(&tree).expect("create the base's source folder");
    let mut archive = git()
        .args(["archive", "--format=tar", commit])
        .stdout(Stdio::piped())
        .spawn()
        .expect("run git archive");
    let unpacked = Command::new("tar")
        .arg("-x")
        .current_dir(&tree)
        .stdin(archive.stdout.take().expect("git archive's output"))
        .status()
        .expect("run tar");
    let archived = archive.wait().expect("wait for git archive");
    assert!(
        unpacked.success() && archived.success(),
        "unpacking {commit} failed"
    );
    cargo_build(&tree, dir, commit);
    let _ = fs::remove_dir_all(&tree);
}

/// `cargo build --release --locked --bin git-rutter` of the sources in `tree`, in the target
/// folder every base shares (incremental from one build to the next), the binary copied to
/// `dir/git-rutter` and cargo's output to `dir/build.log`.
fn cargo_build(tree: &Path, dir: &Path, what: &str) {
    let log = fs::File::create(dir.join("build.log")).expect("create build.log");
    let target = dir.parent().expect("base/").join("target");
    let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--release", "--locked", "--bin", "git-rutter"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(tree)
        .stdout(log.try_clone().expect("build.log"))
        .stderr(log)
        .status()
        .expect("run cargo build");
    assert!(
        built.success(),
        "building {what} failed: see {}",
        dir.join("build.log").display()
    );
    fs::copy(target.join("release/git-rutter"), dir.join("git-rutter")).expect("keep the binary");
}

fn git() -> Command {
    let mut c = Command::new("git");
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}
