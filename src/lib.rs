//! git-rutter: a git-native memory-of-use layer for AI agents.
//!
//! # Crate map
//!
//! The modules in layers, from the top. A module uses only modules on layers below its own,
//! never one beside or above it; `tests/architecture.rs` reads this table and fails on any other
//! edge (and so on any cycle), and `tools/modgraph.py` prints the graph the code has.
//!
//! | layer | modules | what they own |
//! |---|---|---|
//! | 10 | [`cli`] | one file per subcommand; the only place `anyhow` and clap are used |
//! | 9 | [`mcp`] | the MCP server over stdio (rmcp, tokio, notify: only here) |
//! | 8 | [`recall`], [`status`] | reading the record back (`recent`, `log`'s rows, search, notes, gate, reindex, where a dead reference went) for the CLI and the server; `git rutter status` |
//! | 7 | [`capture`], [`clients`], [`index`], [`setup`], [`sync`] | the Stop-hook pipeline; the AI clients `install-hook` registers with, and the git hooks' checks; the SQLite index (rusqlite: only here); `init` and the `rutter.*` settings; one record across machines through a git remote |
//! | 6 | [`audit`] | `verify` and `diff`: has anything in the record changed since it was committed, and the same rules for what a remote sends (it reads the tip, reflog and witness log together under the recorder's read snapshot) |
//! | 5 | [`recorder`], [`vault`] | the one record-write path: a `Recorder` session holds the capture lock, the store and the pending journal, and every writer appends, replays and commits through it; where the vault is and why |
//! | 4 | [`store`] | the git adapter (git2: only here): the record ref, commits, trees, packs, refs, config, transport; narrow git questions, no command's logic, no journal |
//! | 3 | [`journal`], [`lock`], [`machine`], [`overlay`] | the pending journal (what was appended and not yet committed) and what its records may claim; the capture lock; this clone's writer id; the one way to a record file's folder below `_librarian/` |
//! | 2 | [`fsx`], [`records`] | symlink-safe file access; the record model and its text formats |
//! | 1 | [`argv`], [`clock`], [`contract`], [`count`], [`detached`], [`failpoint`], [`hint`], [`objectid`], [`shortid`], [`textblock`] | command lines as words; time; the capture contract's text; a count with its noun; this program started again in the background; test-only failures of each write step; what to do about an error, apart from its message; git object names (our own type: git2's stays in `store`); abbreviated ids; marked blocks in users' files |

pub mod argv;
pub mod audit;
pub mod capture;
pub mod cli;
pub mod clients;
pub mod clock;
pub mod contract;
pub mod count;
pub mod detached;
pub mod failpoint;
pub mod fsx;
pub mod hint;
pub mod index;
pub mod journal;
pub mod lock;
pub mod machine;
pub mod mcp;
pub mod objectid;
pub mod overlay;
pub mod recall;
pub mod recorder;
pub mod records;
pub mod setup;
pub mod shortid;
pub mod status;
pub mod store;
pub mod sync;
pub mod textblock;
pub mod vault;
