//! `git rutter demo`: the design essay's newsletter example, end to end, in a scratch vault.
//!
//! Every step runs the real code path: the capture goes through the `capture` subcommand of
//! this very binary with a Claude Code Stop payload on stdin, and the history is shown by the
//! real `git` when it is installed.

use super::{CommandResult, Exit, Ui};
use crate::clock;
use crate::setup;
use crate::store::gitenv;
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SURVEY: &str = "---\ntype: note\nstatus: snapshot\ncreated: 2026-10-02\n---\n# Reader survey (autumn)\n\nA fictional survey, made up for this demo.\n\n- 48% of readers want fewer, longer issues.\n- The top request was more depth per topic.\n- Many skim the weekly roundup.\n";
const CADENCE: &str = "---\ntype: note\nstatus: draft\ncreated: 2026-10-03\n---\n# Publishing cadence\n\nA fictional draft, made up for this demo. Three options:\n\n1. Stay weekly, with a shorter roundup.\n2. Go fortnightly, one long essay per issue.\n3. Go monthly, with a digest.\n";
const DECISION: &str = "Decided to move the newsletter from weekly to fortnightly, one long essay per issue, based on the autumn reader survey (48% want fewer, longer issues). Main risk: readers forgetting between issues.";

/// Run a guided demo: capture a decision through the real hook, rename a note, recall it.
///
/// Builds a two-note vault (the newsletter example from the design essay), makes it a git
/// repository, runs `git rutter init`, captures a decision from a Claude Code transcript
/// through `git rutter capture`, renames a cited note, and shows `git rutter recent` and
/// `git log refs/rutter/records`. Without DIR it works in a temporary directory that is
/// removed afterwards; nothing is written outside DIR and your git config is not touched.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to build the demo (must be empty or missing); kept afterwards.
    pub dir: Option<PathBuf>,
}

/// Runs the demo.
pub fn run(ui: &mut Ui, args: Args) -> CommandResult {
    let place = Place::new(args.dir)?;
    let vault = place.dir.join("vault");
    capture_steps(ui, &place.dir, &vault)?;
    recall_steps(ui, &vault)?;
    ui.write_raw(b"\n")?;
    if place.kept() {
        let vault = vault.display();
        ui.write_raw(
            format!("The demo vault is in {vault}. Try: git rutter --vault {vault} recent\n")
                .as_bytes(),
        )?;
    } else {
        ui.write_raw(b"Done. The temporary demo directory has been removed; run `git rutter demo DIR` to keep one.\n")?;
    }
    Ok(Exit::Clean)
}

/// Where the demo runs: DIR, kept afterwards, or a temporary directory removed on drop.
struct Place {
    dir: PathBuf,
    temp: Option<tempfile::TempDir>,
}

impl Place {
    /// DIR (created when missing, refused unless empty), else a new temporary directory.
    fn new(dir: Option<PathBuf>) -> anyhow::Result<Place> {
        let Some(d) = dir else {
            let temp = tempfile::Builder::new().prefix("rutter-demo-").tempdir()?;
            let dir = temp.path().canonicalize()?;
            return Ok(Place {
                dir,
                temp: Some(temp),
            });
        };
        // The demo writes only into the empty folder the user named (or a new temporary one),
        // never into an existing vault's `_librarian/` or `.git/`: plain paths are fine here.
        std::fs::create_dir_all(&d)?;
        anyhow::ensure!(
            std::fs::read_dir(&d)?.next().is_none(),
            "{} is not empty; pick an empty or new directory",
            d.display()
        );
        Ok(Place {
            dir: d.canonicalize()?,
            temp: None,
        })
    }

    /// Whether the directory outlives the demo (it was given as DIR).
    fn kept(&self) -> bool {
        self.temp.is_none()
    }
}

/// Steps 1 to 4: the vault, `init`, a capture through the Stop hook, and the same hook again.
fn capture_steps(ui: &mut Ui, dir: &Path, vault: &Path) -> anyhow::Result<()> {
    step(ui, 1, "A notes vault with two notes, kept in git.")?;
    make_vault(vault)?;
    show(
        ui,
        &format!(
            "{}/Notes/reader-survey.md and Notes/publishing-cadence.md",
            vault.display()
        ),
    )?;
    step(
        ui,
        2,
        "`git rutter init` creates refs/rutter/records, the record chain beside your branches.",
    )?;
    let (_, report) = setup::init(vault, clock::now())?;
    show(
        ui,
        &format!(
            "refs/rutter/records -> {}",
            crate::shortid::long(&report.tip)
        ),
    )?;
    step(
        ui,
        3,
        "A Claude Code session ends its reply with a directive line; the Stop hook captures it.",
    )?;
    let transcript = write_transcript(dir)?;
    show(ui, hook(vault, &transcript, dir)?.trim_end())?;
    show_day_file(ui, vault)?;
    step(
        ui,
        4,
        "The Stop hook fires again after the next turn: the same line is not recorded twice.",
    )?;
    show(
        ui,
        hook(vault, &transcript, dir)?.lines().next().unwrap_or(""),
    )
}

/// Steps 5 to 9: the notes renamed, `reindex`, `recent`, the record log and the stored line.
fn recall_steps(ui: &mut Ui, vault: &Path) -> anyhow::Result<()> {
    step(ui, 5, "Outside any session, the survey note is renamed unedited, and the options note is edited and renamed; both committed.")?;
    rename_notes(vault)?;
    show(ui, "Notes/reader-survey.md      -> Research/reader-survey-autumn.md (same bytes)\nNotes/publishing-cadence.md -> Notes/cadence-decision.md (one line added)")?;
    step(ui, 6, "`git rutter reindex`: the identity pass binds the unedited rename by its exact hash; git's rename detection offers the edited one as a candidate, never binding it.")?;
    show(ui, &own(vault, &["reindex"])?)?;
    step(
        ui,
        7,
        "`git rutter recent`: the decision comes back with its date, project and cited notes.",
    )?;
    show(ui, &own(vault, &["recent"])?)?;
    step(
        ui,
        8,
        "`git log refs/rutter/records`: one commit per capture or binding, each only adding lines.",
    )?;
    show(ui, &git_log(vault))?;
    step(ui, 9, "The stored line is never rewritten: the committed day file still cites the paths as they were.")?;
    show(ui, &committed_refs(vault)?)
}

fn step(ui: &mut Ui, n: u32, text: &str) -> anyhow::Result<()> {
    Ok(ui.print(&format!("\n{n}. {text}"))?)
}

fn show(ui: &mut Ui, text: &str) -> anyhow::Result<()> {
    let indented: Vec<String> = text.lines().map(|l| format!("   {l}")).collect();
    Ok(ui.print(&indented.join("\n"))?)
}

fn make_vault(vault: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(vault.join("Notes"))?;
    std::fs::write(vault.join("Notes/reader-survey.md"), SURVEY)?;
    std::fs::write(vault.join("Notes/publishing-cadence.md"), CADENCE)?;
    gitenv::init_repo(vault)?;
    commit_all(vault, "Add the newsletter notes")
}

fn rename_notes(vault: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(vault.join("Research"))?;
    std::fs::rename(
        vault.join("Notes/reader-survey.md"),
        vault.join("Research/reader-survey-autumn.md"),
    )?;
    let edited = format!("{CADENCE}\nDecision: going fortnightly from November.\n");
    std::fs::write(vault.join("Notes/cadence-decision.md"), edited)?;
    std::fs::remove_file(vault.join("Notes/publishing-cadence.md"))?;
    commit_all(
        vault,
        "Move the survey to Research/, settle the cadence note",
    )
}

/// Runs this binary on the demo vault and returns its stdout and stderr.
fn own(vault: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new(std::env::current_exe()?)
        .arg("--vault")
        .arg(vault)
        .args(args)
        .stdin(Stdio::null())
        .output()?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    anyhow::ensure!(
        out.status.success(),
        "git rutter {} failed: {text}",
        args.join(" ")
    );
    Ok(text.trim_end().to_string())
}

/// Commits the work tree on the demo's own branch (this is the demo vault, not yours).
fn commit_all(vault: &Path, message: &str) -> anyhow::Result<()> {
    let author = ("rutter demo", "demo@rutter.invalid");
    gitenv::commit_all(vault, &["Notes", "Research"], author, message)?;
    Ok(())
}

fn write_transcript(dir: &Path) -> anyhow::Result<PathBuf> {
    let session = dir.join("claude-session");
    std::fs::create_dir_all(&session)?;
    let directive = serde_json::json!({"summary": DECISION, "refs": ["Notes/reader-survey.md", "Notes/publishing-cadence.md"]});
    let lines = [
        serde_json::json!({"type": "user", "message": {"role": "user", "content": "I'm deciding whether to change my newsletter's publishing cadence. Read Notes/reader-survey.md and Notes/publishing-cadence.md, pick one of the options, and treat that as my decision."}}),
        serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": format!("Fortnightly it is: one long essay per issue.\n\n<!-- librarian-session {directive} -->")}
        ]}}),
    ];
    let path = session.join("transcript.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Runs `git-rutter capture` as Claude Code would: Stop payload on stdin, vault from the
/// environment, working directory in a project folder.
fn hook(vault: &Path, transcript: &Path, dir: &Path) -> anyhow::Result<String> {
    let project = dir.join("newsletter-notes");
    std::fs::create_dir_all(&project)?;
    let payload = serde_json::json!({
        "session_id": "demo-session-1", "transcript_path": transcript, "cwd": project,
        "hook_event_name": "Stop", "stop_hook_active": false,
    });
    let mut child = Command::new(std::env::current_exe()?)
        .args(["capture", "--client", "claude"])
        .env("LIBRARIAN_VAULT_PATH", vault)
        .current_dir(&project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting git-rutter capture")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(payload.to_string().as_bytes())?;
    }
    let out = child.wait_with_output()?;
    anyhow::ensure!(out.stdout.is_empty(), "the capture hook wrote to stdout");
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The `(refs: …)` part of the last committed entry line, read back from the ref.
fn committed_refs(vault: &Path) -> anyhow::Result<String> {
    let v = crate::vault::open(vault, crate::vault::VaultSource::Flag)?;
    let store = crate::store::Store::open(&v)?;
    let day = crate::clock::now().day();
    let path = crate::records::paths::day_file(&day);
    let bytes = store.committed(&path)?.unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let last = text.lines().last().unwrap_or("");
    let refs = last
        .split(" (refs: ")
        .nth(1)
        .and_then(|r| r.split(") <!--").next())
        .unwrap_or("");
    let in_ref = crate::records::paths::year_path(&path).unwrap_or(path);
    Ok(format!(
        "git show refs/rutter/records:{in_ref}\n  … (refs: {refs})"
    ))
}

fn show_day_file(ui: &mut Ui, vault: &Path) -> anyhow::Result<()> {
    let sessions = vault.join("_librarian/sessions");
    let mut files: Vec<_> = std::fs::read_dir(&sessions)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .collect();
    files.sort();
    if let Some(last) = files.last() {
        let text = std::fs::read_to_string(last)?;
        show(
            ui,
            &format!("{}:", last.strip_prefix(vault).unwrap_or(last).display()),
        )?;
        if let Some(line) = text.lines().last() {
            let cut: String = line.chars().take(150).collect();
            show(ui, &format!("  {cut}…"))?;
        }
    }
    Ok(())
}

/// `git log --stat refs/rutter/records` from the real git, or the same from libgit2.
fn git_log(vault: &Path) -> String {
    let out = crate::store::gitcli::git_in(vault).map(|mut git| {
        git.args(["log", "--format=%h %s", "--stat=100", "refs/rutter/records"])
            .output()
    });
    match out {
        Some(Ok(o)) if o.status.success() => {
            String::from_utf8_lossy(&o.stdout).trim_end().to_string()
        }
        _ => libgit2_log(vault).unwrap_or_else(|e| format!("(cannot read the log: {e})")),
    }
}

fn libgit2_log(vault: &Path) -> anyhow::Result<String> {
    Ok(gitenv::one_line_log(vault, crate::store::RECORDS_REF)?.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_dir_is_kept_whatever_its_name() {
        let t = tempfile::tempdir().unwrap();
        let given = Place::new(Some(t.path().join("rutter-demo-mine"))).unwrap();
        assert!(given.kept() && given.dir.is_dir());
        std::fs::write(given.dir.join("x"), "").unwrap();
        assert!(Place::new(Some(given.dir.clone())).is_err(), "not empty");
        let temp = Place::new(None).unwrap();
        let dir = temp.dir.clone();
        assert!(!temp.kept() && dir.is_dir());
        drop(temp);
        assert!(!dir.exists(), "the temporary directory is removed");
    }
}
