//! `git rutter timeline` as a process (spec/timeline.md): the page holds what `recent --all
//! --json` shows, filtered as it filters; `-o FILE` replaces only a page it wrote; `--open`
//! runs the opener found on PATH with the page's absolute path; a terminal is refused. What the
//! page does in a browser is `tests/timeline_browser.py`'s.

use crate::common;

use common::json::{decode, timeline_data, Recent, TimelineData};
use common::{Env, BIN};
use serde_json::Value;
use std::collections::BTreeSet;
use std::process::Command;

/// A vault with four decisions over two days and three projects (alpha, beta, vault), one of them retracted, one
/// citing a note edited since, one by Codex with a summary that is markup anywhere else.
fn vault() -> Env {
    let env = Env::git_vault();
    for (ts, summary, refs, project) in [
        (
            "2026-11-29T10:00:00.000Z",
            "Chose SQLite.",
            &["Notes/a.md"][..],
            "alpha",
        ),
        (
            "2026-11-30T09:00:00.000Z",
            "Kept one schema file.",
            &[][..],
            "beta",
        ),
        ("2026-11-30T10:00:00.000Z", "A mistake.", &[][..], "beta"),
    ] {
        // The project is the name of the folder the session worked in.
        let dir = env.root().join(project);
        std::fs::create_dir_all(&dir).unwrap();
        let mut c = env.cmd();
        c.env("RUTTER_TIMESTAMP", ts).args([
            "capture",
            "--summary",
            summary,
            "--session",
            project,
            "--cwd",
        ]);
        c.arg(&dir);
        for r in refs {
            c.args(["--ref", r]);
        }
        let r = common::run_with_stdin(&mut c, b"");
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let r = env.capture_at(
        "2026-11-30T11:00:00.000Z",
        "Hostile: <script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\"> end.",
        &["Notes/b.md"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = env.rutter(&["retract", "20261130T100000", "--reason", "not a decision"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    env.write("Notes/a.md", "# Alpha\n\nEdited since.\n");
    env
}

/// The page's data block, decoded.
fn data(html: &str) -> TimelineData {
    timeline_data(html)
}

/// The summaries of `recent --all --json ARGS`.
fn recent_summaries(env: &Env, args: &[&str]) -> BTreeSet<String> {
    let mut all = vec!["recent", "--all", "--json"];
    all.extend(args);
    let r = env.rutter(&all);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let recent: Recent = decode(&r.stdout);
    recent.summaries().into_iter().map(String::from).collect()
}

/// The summaries the page of `timeline ARGS` (written to stdout) holds.
fn page_summaries(env: &Env, args: &[&str]) -> BTreeSet<String> {
    let mut all = vec!["timeline"];
    all.extend(args);
    let r = env.rutter(&all);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "", "stdout is the page, and nothing is said");
    data(&r.stdout)
        .decisions
        .into_iter()
        .map(|d| d.summary)
        .collect()
}

#[test]
fn the_page_holds_what_recent_all_shows_with_the_same_filters() {
    let env = vault();
    for args in [
        &[][..],
        &["--project", "BETA"],
        &["--since", "2026-11-30", "--utc"],
        &["--until", "2026-11-29"],
        &["--grep", "sqlite"],
        &["--client", "codex"],
    ] {
        let page = page_summaries(&env, args);
        assert_eq!(page, recent_summaries(&env, args), "{args:?}");
    }
    let all = page_summaries(&env, &[]);
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(
        !all.contains("A mistake."),
        "a retracted decision is left out"
    );
}

#[test]
fn each_decision_carries_its_day_project_time_and_the_drift_of_its_notes() {
    let env = vault();
    let r = env.rutter(&["timeline", "--utc"]);
    let html = r.stdout;
    assert!(html.starts_with("<!DOCTYPE html>"));
    let v = data(&html);
    let first = &v.decisions[0];
    assert_eq!(first.day, "2026-11-30");
    assert_eq!(first.project.as_deref(), Some("beta"));
    assert_eq!(first.time, "09:00:00");
    let alpha = v.decision("Chose SQLite.");
    assert_eq!(alpha.refs[0].path, "Notes/a.md");
    assert_eq!(
        alpha.refs[0].drift.as_deref(),
        Some("(changed since capture)")
    );
    // The hostile summary is in the data as text, and nowhere as markup.
    assert!(!html.contains("<img"));
    assert_eq!(html.matches("<script").count(), 2);
    assert!(html.contains("\\u003cscript\\u003ewindow.pwned=1"));
}

#[test]
fn output_replaces_only_a_page_it_wrote() {
    let env = vault();
    std::fs::create_dir(env.root().join("out")).unwrap();
    let page = env.root().join("out/timeline.html");
    let r = env.rutter(&["timeline", "-o", page.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        format!(
            "Wrote the timeline of 3 decisions (2 days, 3 projects) to {}.\n",
            page.display()
        )
    );
    // Its own page is replaced (a relative FILE is the current folder's).
    std::fs::write(&page, std::fs::read_to_string(&page).unwrap() + "old").unwrap();
    let mut c = env.cmd();
    c.current_dir(page.parent().unwrap())
        .args(["timeline", "-o", "timeline.html"]);
    let r = common::run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!std::fs::read_to_string(&page).unwrap().ends_with("old"));
    // A note, a folder and a symlink are never replaced.
    let note = env.vault.join("Notes/b.md");
    let r = env.rutter(&["timeline", "-o", note.to_str().unwrap()]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        format!(
            "git-rutter: {} exists and is not a timeline git-rutter wrote; nothing was written. Name a new file, or remove it first.\n",
            note.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&note).unwrap(), common::NOTE_B);
    let r = env.rutter(&["timeline", "-o", env.vault.join("Notes").to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let link = env.root().join("link.html");
    std::os::unix::fs::symlink(&page, &link).unwrap();
    let r = env.rutter(&["timeline", "-o", link.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("is not a regular file"), "{}", r.stderr);
}

/// `timeline -o FILE` of a vault, run in the vault: its exit status and stderr.
fn output_to(env: &Env, file: &str) -> common::Run {
    env.rutter_in(&env.vault, &["timeline", "-o", file])
}

#[test]
fn only_a_file_that_starts_as_its_page_is_replaced() {
    let env = vault();
    // A note about rutter quotes the generator line near its start: it is no page.
    let about = "# How rutter marks its page\n\nIt writes <meta name=\"generator\" content=\"git-rutter timeline\"> in the head.\n";
    env.write("Notes/about.md", about);
    env.git(&["add", "Notes/about.md"]);
    env.git(&["commit", "-qm", "about"]);
    let status = env.git(&["status", "--porcelain"]);
    let r = output_to(&env, "Notes/about.md");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "git-rutter: {} exists and is not a timeline git-rutter wrote; nothing was written. Name a new file, or remove it first.\n",
            env.vault.join("Notes/about.md").display()
        )
    );
    assert_eq!(env.read("Notes/about.md"), about);
    assert_eq!(env.git(&["status", "--porcelain"]), status);
    // A page's whole head quoted after a first line of its own is no page either.
    let page = env.root().join("page.html");
    assert_eq!(output_to(&env, page.to_str().unwrap()).code, 0);
    let quoted = format!("# A page\n{}", std::fs::read_to_string(&page).unwrap());
    std::fs::write(&page, &quoted).unwrap();
    assert_eq!(output_to(&env, page.to_str().unwrap()).code, 1);
    assert_eq!(std::fs::read_to_string(&page).unwrap(), quoted);
}

#[test]
fn the_page_never_goes_into_the_record_the_git_folder_or_a_missing_folder() {
    let env = vault();
    let day = env.first_day();
    let before = env.read(&day);
    let status = env.git(&["status", "--porcelain"]);
    std::os::unix::fs::symlink(env.vault.join("_librarian"), env.vault.join("lib")).unwrap();
    std::fs::create_dir(env.root().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(env.vault.join(".git"), env.root().join("elsewhere/g")).unwrap();
    let git_page = env.root().join("elsewhere/g/timeline.html");
    for (file, folder) in [
        (day.as_str(), "_librarian/ (its record)"),
        ("_librarian/sessions/new.md", "_librarian/ (its record)"),
        ("Notes/../_librarian/x.html", "_librarian/ (its record)"),
        ("lib/x.html", "_librarian/ (its record)"),
        ("_LIBRARIAN", "_librarian/ (its record)"),
        (".git/timeline.html", ".git/ (its git folder)"),
        (".git/rutter/page.html", ".git/ (its git folder)"),
        (git_page.to_str().unwrap(), ".git/ (its git folder)"),
    ] {
        let r = output_to(&env, file);
        assert_eq!(r.code, 1, "{file}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!(" is in the vault's {folder}; nothing was written. Name a file outside _librarian/ and .git/.")),
            "{file}: {}",
            r.stderr
        );
    }
    // As the shell's `>`: a folder that does not exist is not made.
    let r = output_to(&env, "no/such/dir/x.html");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "git-rutter: {} is no folder to write x.html in; nothing was written. Create the folder first, or name a file in a folder that exists.\n",
            env.vault.join("no/such/dir").display()
        )
    );
    assert!(!env.vault.join("no").exists());
    assert_eq!(env.read(&day), before, "the day file is untouched");
    assert!(!env.vault.join("_librarian/sessions/new.md").exists());
    assert!(!env.vault.join("_librarian/x.html").exists());
    assert!(!env.vault.join(".git/timeline.html").exists());
    let r = env.rutter(&["verify"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    std::fs::remove_file(env.vault.join("lib")).unwrap();
    assert_eq!(env.git(&["status", "--porcelain"]), status);
}

/// The bidi controls and invisible format characters a terminal shows as `\u{XXXX}`.
const HIDDEN: [char; 13] = [
    '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}', '\u{2068}',
    '\u{2069}', '\u{200E}', '\u{200F}', '\u{061C}', '\u{FEFF}',
];

/// An entry line no capture wrote (in no commit, so `[unverified]`), for the day file of
/// `day`: `fields` are its JSON's `client`, `summary` and the rest, as given.
fn forged_line(day: &str, id: &str, fields: Value) -> String {
    let mut entry = serde_json::json!({
        "id": id, "session_id": "forged", "time": format!("{day}T05:00:00.000Z"), "refs": [],
    });
    for (k, v) in fields.as_object().unwrap() {
        entry[k] = v.clone();
    }
    format!("- 05:00:00 — forged <!-- rutter:entry {entry} -->\n")
}

#[test]
fn a_bidi_name_and_a_forged_client_are_shown_as_data() {
    let env = vault();
    let name = "Notes/rlo\u{202E}dm.md";
    env.write(name, "x\n");
    env.git(&["add", "-A", "Notes"]);
    env.git(&["commit", "-qm", "a bidi name"]);
    let directive =
        serde_json::json!({"session_id": "b1", "summary": "cites a bidi name", "refs": [name]});
    let r = env.capture(directive.to_string().as_bytes(), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let day = env.first_day();
    let mut text = env.read(&day);
    let hidden: String = HIDDEN.iter().collect();
    text.push_str(&forged_line(
        "2026-11-29",
        "20261129T050000000Z-zz-0001",
        serde_json::json!({"client": "claude\u{202E}", "summary": format!("exe.png{hidden}"), "workspace": {"cwd": "/w", "project": "\u{202E}proj"}}),
    ));
    env.write(&day, &text);
    let r = env.rutter(&["timeline"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for c in HIDDEN {
        assert!(!r.stdout.contains(c), "the page holds U+{:04X}", c as u32);
    }
    let v = data(&r.stdout);
    let cites = v.decision("cites a bidi name");
    assert_eq!(cites.refs[0].path, "Notes/rlo\\u{202E}dm.md");
    let forged = v
        .decisions
        .iter()
        .find(|d| d.client.as_deref() == Some("claude\\u{202E}"))
        .unwrap();
    assert_eq!(forged.project.as_deref(), Some("\\u{202E}proj"));
    let shown: String = HIDDEN
        .iter()
        .map(|c| format!("\\u{{{:04X}}}", *c as u32))
        .collect();
    assert_eq!(forged.summary, format!("exe.png{shown}"));
    assert_eq!(forged.mark.as_deref(), Some("[unverified]"));
}

#[test]
fn a_huge_summary_in_the_record_is_cut_on_the_page() {
    let env = vault();
    let rel = "_librarian/sessions/2026-11-28.zz-0001.md";
    let big = "B".repeat(8 << 20);
    let text = format!(
        "---\ncollection: librarian.sessions\nschema: session-record@2\nday: '2026-11-28'\n---\n# Sessions - 2026-11-28\n\n{}",
        forged_line("2026-11-28", "20261128T050000000Z-zz-0001", serde_json::json!({"summary": big}))
    );
    env.write(rel, &text);
    common::Forged {
        writes: &[(&common::in_ref(rel), &text)],
        message: "rutter: capture 2026-11-28",
        why: "a huge summary",
        ..Default::default()
    }
    .commit(&env);
    let page = env.root().join("page.html");
    let r = env.rutter(&["timeline", "-o", page.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.len() < 200_000, "the page is {} bytes", html.len());
    let v = data(&html);
    let huge = v
        .decisions
        .iter()
        .find(|d| d.summary.starts_with("BBB"))
        .expect("the decision is on the page");
    assert_eq!(
        huge.summary,
        format!("{}… [cut: 8386608 more characters]", "B".repeat(2000))
    );
    assert_eq!(huge.mark, None, "it is committed: {huge:?}");
}

#[test]
fn a_use_dated_after_the_clock_leaves_the_chart_its_weeks() {
    let env = vault();
    let log = env.vault.join("_librarian/stateful-use.jsonl");
    std::fs::write(
        &log,
        "{\"ts\":\"2026-11-30T12:00:00.000Z\",\"kind\":\"librarian-recent\"}\n{\"ts\":\"9999-12-31T23:59:59.999Z\",\"kind\":\"librarian-recent\"}\n",
    )
    .unwrap();
    let mut c = env.cmd();
    c.env("RUTTER_TIMESTAMP", "2026-12-01T09:00:00.000Z")
        .args(["timeline", "--utc"]);
    let r = common::run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(">2026-W48<"),
        "the chart draws the decisions' weeks"
    );
    assert!(r
        .stdout
        .contains("<title>2026-W49 (from 2026-11-30): 1 use</title>"));
    assert!(!r.stdout.contains("9999-W"));
    assert!(r.stdout.contains("<p class=\"lede\">1 use event outside 2006-11-28 to 2026-12-02, not drawn in the chart: dated after this machine&#39;s clock, or more than 20 years before it.</p>"));
}

/// A folder holding a fake opener that writes its arguments to `args.txt` beside it.
#[cfg(target_os = "linux")]
fn fake_opener(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let opener = dir.join("xdg-open");
    let log = dir.join("args.txt");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n", log.display()),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[cfg(target_os = "linux")]
#[test]
fn open_runs_the_opener_on_path_with_the_absolute_page() {
    let env = vault();
    let bin = env.root().join("bin");
    fake_opener(&bin);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let r = common::run_with_stdin(
        env.cmd().env("PATH", &path).args(["timeline", "--open"]),
        b"",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let page = env.vault.join(".git/rutter/timeline.html");
    assert_eq!(
        r.stderr,
        format!(
            "Wrote the timeline of 3 decisions (2 days, 3 projects) to {}; opened it with {}.\n",
            page.display(),
            bin.join("xdg-open").display()
        )
    );
    // The opener may still be running when the command returns.
    let log = bin.join("args.txt");
    for _ in 0..100 {
        if log.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!("{}\n", page.display())
    );
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    // An opener only a relative PATH entry names is never run: the page is written and the
    // user told to open it.
    let rel = std::path::Path::new("..").join("bin");
    let mut c = env.cmd();
    c.env("PATH", rel.as_os_str())
        .current_dir(env.root().join("alpha"))
        .args(["timeline", "--open", "-o", "../t.html"]);
    std::fs::remove_file(&log).unwrap();
    let r = common::run_with_stdin(&mut c, b"");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr,
        format!(
            "git-rutter: no xdg-open on PATH to open the page with. Open {} in your browser.\n",
            env.root().join("t.html").display()
        )
    );
    assert!(!log.exists());
    assert!(env.root().join("t.html").exists());
}

#[test]
fn a_terminal_is_refused() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux script is not installed");
        return;
    }
    let env = vault();
    let line = format!(
        "{BIN} --vault {} timeline; echo \"exit $?\"",
        env.vault.display()
    );
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("TERM", "dumb")
        .current_dir(&env.vault)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert_eq!(
        shown,
        "git-rutter: the timeline is an HTML page, not text for a terminal. Write it with `-o FILE`, open it with `--open`, or redirect stdout (`> timeline.html`).\nexit 2\n"
    );
}

/// The page takes cited notes' hashes from the index, made fresh first: a note edited after
/// the index was last refreshed shows as changed, one left alone as it was.
#[test]
fn a_note_edited_after_the_index_was_built_shows_as_changed() {
    let env = vault();
    assert_eq!(env.rutter(&["reindex"]).code, 0);
    let drift = |env: &Env| {
        let v = data(&env.rutter(&["timeline", "--utc"]).stdout);
        let hostile = v
            .decisions
            .iter()
            .find(|d| d.summary.starts_with("Hostile:"))
            .expect("the hostile decision")
            .clone();
        hostile.refs[0].drift.clone()
    };
    assert_eq!(drift(&env), None);
    env.write("Notes/b.md", "# B\n\nEdited after the index was built.\n");
    assert_eq!(drift(&env).as_deref(), Some("(changed since capture)"));
}
