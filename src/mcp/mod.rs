//! The MCP server: `git-rutter mcp` over stdio, tools only, with the instructions of `contract`;
//! `--allow-record`, the recording tool for clients without a Stop hook; `git rutter watch`, its
//! watcher alone ([`standalone`]).

pub(crate) mod frames;
pub(crate) mod freshness;
pub(crate) mod record_tool;
mod record_watch;
mod remote_fs;
pub(crate) mod server;
pub(crate) mod standalone;
pub(crate) mod sync_socket;
pub(crate) mod triage;
