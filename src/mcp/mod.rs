//! The MCP server: `git-rutter mcp` over stdio, tools only, with the instructions of `contract`;
//! `--allow-record`, the recording tool for clients without a Stop hook.

pub mod frames;
pub mod freshness;
pub mod record_tool;
pub mod server;
pub mod triage;
