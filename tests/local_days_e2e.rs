//! Days are local days (issue 20, item 3): `log --day`, `recent --days`, `--since`/`--until`
//! with a day, `Nd` or git's words, on the built binary with `TZ` west and east of UTC, and
//! `--utc` switching all of it back to the UTC days the record is filed by.

use crate::common;

use common::*;

/// "Now" for every run: 2026-12-02 03:00 UTC, which is the evening of 2026-12-01 in Los
/// Angeles (-0800) and the afternoon of 2026-12-02 in Auckland (+1300).
const NOW: &str = "2026-12-02T03:00:00.000Z";

/// Three decisions: C at 10:00 UTC on the 1st (LA 1st 02:00, Auckland 1st 23:00), A at 20:00
/// UTC on the 1st (LA 1st 12:00, Auckland 2nd 09:00), B at 02:00 UTC on the 2nd (LA 1st 18:00,
/// Auckland 2nd 15:00).
fn vault() -> Env {
    let env = Env::git_vault();
    for (ts, summary) in [
        ("2026-12-01T10:00:00.000Z", "Decision C."),
        ("2026-12-01T20:00:00.000Z", "Decision A."),
        ("2026-12-02T02:00:00.000Z", "Decision B."),
    ] {
        let r = env.capture_at(ts, summary, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    env
}

fn run(env: &Env, tz: &str, args: &[&str]) -> Run {
    let mut c = env.cmd();
    c.env("TZ", tz).env("RUTTER_TIMESTAMP", NOW).args(args);
    run_with_stdin(&mut c, b"")
}

/// The decisions (A, B, C) an answer shows, in alphabetical order.
fn shown(r: &Run) -> String {
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut got: Vec<&str> = ["A", "B", "C"]
        .into_iter()
        .filter(|d| r.stdout.contains(&format!("Decision {d}.")))
        .collect();
    got.sort();
    got.concat()
}

const LA: &str = "America/Los_Angeles";
const NZ: &str = "Pacific/Auckland";

#[test]
fn today_is_the_local_today_west_and_east_of_utc() {
    let env = vault();
    for (tz, extra, want) in [
        (LA, &[][..], "ABC"),
        (NZ, &[][..], "AB"),
        ("UTC", &[][..], "B"),
        (LA, &["--utc"][..], "B"),
        (NZ, &["--utc"][..], "B"),
    ] {
        for cmd in ["recent", "log"] {
            let args = [&[cmd, "--since", "0d"][..], extra].concat();
            assert_eq!(shown(&run(&env, tz, &args)), want, "TZ={tz} {args:?}");
        }
    }
}

#[test]
fn log_day_and_recent_days_count_local_days() {
    let env = vault();
    for (tz, day, want) in [
        (LA, "2026-12-01", "ABC"),
        (LA, "2026-12-02", ""),
        (NZ, "2026-12-01", "C"),
        (NZ, "2026-12-02", "AB"),
        ("UTC", "2026-12-01", "AC"),
    ] {
        let r = run(&env, tz, &["log", "--day", day]);
        assert_eq!(shown(&r), want, "TZ={tz} --day {day}");
        let r = run(&env, tz, &["log", "--since", day, "--until", day]);
        assert_eq!(shown(&r), want, "TZ={tz} --since/--until {day}");
    }
    assert_eq!(
        shown(&run(&env, NZ, &["log", "--day", "2026-12-01", "--utc"])),
        "AC"
    );
    // --days 1 is today and yesterday: in Auckland the 1st and the 2nd.
    assert_eq!(shown(&run(&env, NZ, &["recent", "--days", "1"])), "ABC");
    let until = run(&env, NZ, &["recent", "--until", "1d"]);
    assert_eq!(shown(&until), "C", "up to yesterday, Auckland's 1st");
}

#[test]
fn an_entry_made_now_is_under_todays_local_date() {
    let env = vault();
    let r = run(
        &env,
        LA,
        &["capture", "--summary", "Decision N.", "--session", "S"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let today = run(&env, LA, &["log", "--day", "2026-12-01"]);
    assert!(today.stdout.contains("Decision N."), "{}", today.stdout);
    assert!(
        today.stdout.contains("2026-12-01 19:00:00 -0800"),
        "{}",
        today.stdout
    );
    let nz = run(&env, NZ, &["log", "--day", "2026-12-02"]);
    assert!(nz.stdout.contains("Decision N."), "{}", nz.stdout);
}

#[test]
fn git_date_words_are_read_as_git_reads_them() {
    let env = vault();
    for (since, want) in [
        // 24 hours before 03:00 on the 2nd: C (10:00 on the 1st) is later.
        ("yesterday", "ABC"),
        ("1.day.ago", "ABC"),
        ("10 hours ago", "AB"),
        ("3 hours ago", "B"),
        ("2.hours.ago", "B"),
        ("2026-12-01 12:00", "AB"),
        ("2026-12-01T20:00:00Z", "AB"),
        ("last week", "ABC"),
    ] {
        let r = run(&env, "UTC", &["log", "--since", since]);
        assert_eq!(shown(&r), want, "--since {since:?}");
    }
    // A day and time without an offset is a local time: noon in LA is 20:00 UTC.
    let r = run(&env, LA, &["log", "--since", "2026-12-01 12:00"]);
    assert_eq!(shown(&r), "AB");
    let r = run(&env, LA, &["recent", "--until", "2026-12-01 11:59"]);
    assert_eq!(shown(&r), "C");
    let bad = run(&env, "UTC", &["log", "--since", "next tuesday"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("is not a date"), "{}", bad.stderr);
    assert!(
        bad.stderr.contains("3 days ago"),
        "names the forms: {}",
        bad.stderr
    );
}
