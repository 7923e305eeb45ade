//! The MCP server: `git-rutter mcp` over stdio, tools only, and its instructions; with
//! `--allow-record`, the recording tool for clients without a Stop hook.

pub mod freshness;
pub mod instructions;
pub mod record;
pub mod server;
