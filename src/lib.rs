//! git-rutter: a git-native memory-of-use layer for AI agents.
//!
//! Crate map (dependencies point down the list):
//! - [`cli`]: one file per subcommand; the only place `anyhow` is used.
//! - [`mcp`]: the MCP server over stdio (rmcp) and the one source of its instructions.
//! - [`clients`]: the AI clients `install-hook` registers with: their config files, hook entries,
//!   instruction files and MCP registrations.
//! - [`capture`]: the Stop-hook pipeline: payloads, directives, sanitising, refs, provenance,
//!   dedupe.
//! - [`recall`]: `recent` and its renderings, shared by the CLI and (later) the MCP server.
//! - [`status`]: `git rutter status`: what is set up, what is wrong, and what to do.
//! - [`store`]: the only module that touches git2: the record ref, its lock, the pending
//!   journal, adoption at `init`.
//! - [`records`]: the record model and its text formats (entry line, day files @1 and @2).
//! - [`overlay`]: the one way to a record file's folder below `_librarian/` (record paths only,
//!   never through a symlink).
//! - [`vault`], [`fsx`], [`lock`], [`clock`], [`textblock`]: where the vault is, symlink-safe file
//!   access, the capture lock, time, and marked blocks in users' text files; [`failpoint`]:
//!   test-only failures of each write step (debug builds).

pub mod capture;
pub mod cli;
pub mod clients;
pub mod clock;
pub mod failpoint;
pub mod fsx;
pub mod index;
pub mod lock;
pub mod mcp;
pub mod overlay;
pub mod recall;
pub mod records;
pub mod status;
pub mod store;
pub mod textblock;
pub mod vault;
