//! The one integration-test binary, as ripgrep links `tests/tests.rs` and jj
//! `cli/tests/runner.rs`: each file of `tests/` is a module here, so the crate is linked once
//! instead of once per file (45 binaries of 1 GiB together, against 75 MiB for this one). Cargo's
//! discovery of test files is off (`autotests = false` in Cargo.toml); a new file is declared
//! below, and [`every_test_file_is_a_module_here`] fails on one that is not.
//!
//! Run one file's tests by its module: `cargo test --test tests status_e2e::`.
//!
//! All tests share one process. The in-process snapshot tests (`human_output`, through
//! `common::snap`) make its environment hermetic once, before their first command; every
//! `Env` does so when it is made ([`common::Env::bare`]), so a test sees the same environment
//! whichever ran first. A command that needs another sets it on its own `Command`.

mod common;

mod adapters_e2e;
mod adversarial_capture_refs;
mod adversarial_mcp;
mod adversarial_writes;
mod architecture;
mod audit_cli_e2e;
mod auto_sync_e2e;
mod capture_e2e;
mod capture_turn_e2e;
mod cited_by_e2e;
mod clients_e2e;
mod context_e2e;
mod demo;
mod find_decision_e2e;
mod fresh_watcher_e2e;
mod fresh_watcher_log_e2e;
mod gcrypt_e2e;
mod git_conventions_e2e;
mod git_hooks_e2e;
mod help_e2e;
mod hostile_input;
mod hostile_remote_e2e;
mod human_output;
mod identity_e2e;
mod index_e2e;
mod index_place_e2e;
mod init;
mod install_hook_e2e;
mod layout_e2e;
mod local_days_e2e;
mod mcp_burst_e2e;
mod mcp_e2e;
mod mcp_record_e2e;
mod packaging;
mod pager_e2e;
mod purge_e2e;
mod recall_record_e2e;
mod recent_output_e2e;
mod secrets_e2e;
mod setup_e2e;
mod signing_e2e;
mod status_e2e;
mod supersede_e2e;
mod sync_e2e;
mod timeline_e2e;
mod vault_resolution;
mod verify_e2e;
mod watch_e2e;

/// Every `.rs` file of `tests/` (and every folder holding a `mod.rs`) is declared a module of
/// this file: with cargo's discovery off, a file left out would never be built nor run.
#[test]
fn every_test_file_is_a_module_here() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = std::fs::read_to_string(dir.join("tests.rs")).unwrap();
    let declared: std::collections::BTreeSet<&str> = this
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let module = match name.strip_suffix(".rs") {
            Some("tests") => continue,
            Some(stem) => stem.to_string(),
            None if path.join("mod.rs").is_file() => name,
            None => continue,
        };
        if !declared.contains(module.as_str()) {
            missing.push(module);
        }
    }
    assert!(
        declared.len() > 40,
        "the walk read the module list: {declared:?}"
    );
    assert!(
        missing.is_empty(),
        "tests/ files that tests/tests.rs does not declare (add `mod NAME;`): {missing:?}"
    );
}
