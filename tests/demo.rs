//! `git rutter demo DIR` runs end to end and writes nothing outside DIR.

use crate::common;
use common::*;

#[test]
fn the_demo_runs_and_stays_inside_its_directory() {
    let env = Env::bare();
    let dir = env.root().join("demo");
    let mut c = std::process::Command::new(BIN);
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .current_dir(env.root())
        .args(["demo", dir.to_str().unwrap()]);
    let r: Run = c.output().unwrap().into();
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for step in ["1. ", "3. ", "4. ", "7. "] {
        assert!(r.stdout.contains(step), "{}", r.stdout);
    }
    assert!(
        r.stdout.contains("captured 1 entry [newsletter-notes]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("directive unchanged for this session"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("rutter: capture "), "{}", r.stdout);
    assert!(
        std::fs::read_dir(&env.home).unwrap().next().is_none(),
        "HOME untouched"
    );
    let top: Vec<String> = std::fs::read_dir(env.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut top = top;
    top.sort();
    assert_eq!(top, ["demo", "home", "vault"], "nothing beside DIR");
    let fsck = std::process::Command::new("git")
        .args(["fsck", "--strict"])
        .current_dir(dir.join("vault"))
        .output()
        .unwrap();
    assert!(fsck.status.success());
    let again: Run = std::process::Command::new(BIN)
        .args(["demo", dir.to_str().unwrap()])
        .env("HOME", &env.home)
        .output()
        .unwrap()
        .into();
    assert_eq!(again.code, 2, "a non-empty DIR is refused");
    assert!(again.stderr.contains("is not empty"), "{}", again.stderr);
}
