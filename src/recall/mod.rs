//! Recall surfaces shared by the CLI and the MCP server: keeping the index current (its record
//! cache read from `refs/rutter/records`), `recent`, `log`'s rows, search with enrichment,
//! get-note, and refs rendered through the identity projection, every field within a bound, and
//! the timeline page; one entry row (`row`) and its marks for them all.

pub(crate) mod candidates;
pub(crate) mod cited;
pub(crate) mod confirm;
pub(crate) mod context;
pub(crate) mod gate;
#[cfg(test)]
pub(crate) mod generated;
pub(crate) mod in_vault;
pub(crate) mod lite;
pub(crate) mod log;
pub(crate) mod recent;
pub(crate) mod refs;
pub(crate) mod reindex;
pub(crate) mod renames;
pub(crate) mod render;
pub(crate) mod row;
pub(crate) mod search;
pub(crate) mod served;
pub(crate) mod session_start;
pub(crate) mod source;
pub(crate) mod stream;
pub(crate) mod sync_state;
pub(crate) mod timeline;
pub(crate) mod tools;
pub mod uselog;
