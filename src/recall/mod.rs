//! Recall surfaces shared by the CLI and (later) the MCP server: keeping the index current,
//! `recent`, search with enrichment, get-note, and refs rendered through the identity projection.

pub mod candidates;
pub mod confirm;
pub mod gate;
pub mod recent;
pub mod refs;
pub mod reindex;
pub mod render;
pub mod search;
pub mod tools;
pub mod uselog;
