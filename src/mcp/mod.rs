//! The MCP server: `git-rutter mcp` over stdio, tools only, and its instructions.

pub mod freshness;
pub mod instructions;
pub mod server;
