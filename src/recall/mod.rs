//! Recall surfaces shared by the CLI and the MCP server: keeping the index current (its record
//! cache read from `refs/rutter/records`), `recent`, search with enrichment, get-note, and refs
//! rendered through the identity projection.

pub mod candidates;
pub mod confirm;
pub mod gate;
pub mod in_vault;
pub mod recent;
pub mod refs;
pub mod reindex;
pub mod render;
pub mod search;
pub mod source;
pub mod stream;
pub mod tools;
pub mod uselog;
