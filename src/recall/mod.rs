//! Recall surfaces shared by the CLI and (later) the MCP server: `recent` and its renderings.

pub mod recent;
pub mod render;
