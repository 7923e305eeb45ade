//! `git-rutter mcp`: the MCP server over stdio (rmcp), named `rutter`, tools capability only.
//!
//! Start-up resolves the vault (`--vault`, env, git config; never the current directory) and
//! refuses an index at `LIBRARIAN_DB_PATH` (or in the XDG folder) that belongs to another
//! vault, both before serving. The index is opened and refreshed on a background thread so
//! `initialize` is answered at once; tool calls wait for it, and answer why when that failed
//! (an index in the vault's own `.git/` that names a former path of the vault is rebuilt there;
//! a FIFO or link planted at its names is refused there, never opened).
//! That thread then keeps the index in step with the notes while the server runs
//! ([`Freshness`]). stdout carries only JSON-RPC frames; every diagnostic goes to stderr. On
//! stdin EOF every request already read is answered before the process exits (see
//! [`Draining`]); every frame is read with a size bound and every request is answered for its
//! id ([`Frames`]). With `--allow-record` it also serves `librarian-record` ([`super::record_tool`]).

use crate::contract::{instructions_for, user_label};
use crate::index::{self, Index, IndexError};
use crate::mcp::frames::Frames;
use crate::mcp::freshness::Freshness;
use crate::mcp::record_tool::{self, Recorder};
use crate::mcp::sync_socket;
use crate::recall::recent::Query;
use crate::recall::reindex::{self, Mode};
use crate::recall::tools::{self, ArgError};
use crate::recall::uselog::{self, Kind};
use crate::vault::{self, Vault};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage,
    ClientNotification, ContentBlock, ErrorCode, ErrorData, Implementation, JsonRpcMessage,
    ListToolsResult, PaginatedRequestParams, RequestId, ServerCapabilities, ServerConfig,
    ServerJsonRpcMessage, Tool, ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer, ServerInitializeError};
use rmcp::transport::Transport;
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{watch, Notify};

/// The server's name in `initialize`.
pub(crate) const SERVER_NAME: &str = "rutter";

/// Exit status after a clean shutdown (stdin closed).
const EXIT_OK: i32 = 0;
/// Exit status for a fatal start-up error.
const EXIT_FATAL: i32 = 1;

/// The shared index once the background refresh is done, or why it failed.
pub(super) type Ready = Result<Arc<Served>, NotReady>;

/// Why the server has no index to serve (shared by every call that waits for it).
#[derive(Debug, Clone, thiserror::Error)]
pub(super) enum NotReady {
    #[error("could not open the index: {}", crate::hint::one_line(.0.as_ref()))]
    Open(Arc<IndexError>),
    #[error("could not refresh the index: {}", crate::hint::one_line(.0.as_ref()))]
    Refresh(Arc<IndexError>),
    #[error("the index refresh stopped before finishing")]
    Stopped,
}

/// What tool calls share: the index, and what keeps it current.
pub(super) struct Served {
    index: Mutex<Index>,
    fresh: Arc<Freshness>,
}

/// Runs the server until stdin closes; returns the process exit status. `allow_record` serves
/// `librarian-record` too.
pub(crate) fn run(vault_flag: Option<&Path>, allow_record: bool) -> i32 {
    let vault = match vault::resolve(vault_flag, false) {
        Ok(v) => v,
        Err(e) => return fatal(&crate::hint::one_line(&e)),
    };
    if let Err(e) = index::check_owner(&vault) {
        return fatal(&crate::hint::one_line(&e));
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fatal(&e),
    };
    let (db, _) = index::location(&vault);
    eprintln!(
        "[rutter] starting stdio server; vault={} db={}",
        vault.root.display(),
        db.display()
    );
    let fresh = Arc::new(Freshness::new(vault.clone()));
    let (ready, refresher) = match start_refresh(vault.clone(), Arc::clone(&fresh)) {
        Ok(r) => r,
        Err(e) => return fatal(&e),
    };
    crate::sync::auto::while_serving(vault.clone());
    let server = Rutter::new(vault, ready, allow_record);
    let code = runtime.block_on(serve(server));
    // Let an index build, rescan or identity pass still running finish its writes first.
    fresh.stop();
    let _ = refresher.join();
    runtime.shutdown_background();
    code
}

fn fatal(e: &dyn std::fmt::Display) -> i32 {
    eprintln!("[rutter] fatal: {e}");
    EXIT_FATAL
}

/// Serves stdio until the client closes stdin.
async fn serve(server: Rutter) -> i32 {
    let (read, write) = rmcp::transport::stdio_pipes();
    let transport = Draining::new(Frames::new(read, write));
    eprintln!("[rutter] connected.");
    match server.serve(transport).await {
        Ok(running) => match running.waiting().await {
            Ok(_) => EXIT_OK,
            Err(e) => {
                eprintln!("[rutter] error: the server stopped abnormally: {e}");
                EXIT_FATAL
            }
        },
        // The client went away before initializing: nothing to answer.
        Err(ServerInitializeError::ConnectionClosed(_)) => EXIT_OK,
        Err(e) => {
            eprintln!("[rutter] error: {e}");
            EXIT_FATAL
        }
    }
}

/// Opens (building if needed) and refreshes the index on its own thread, starts watching the
/// vault, then keeps the index current on that thread until `fresh` is stopped.
pub(super) fn start_refresh(
    vault: Vault,
    fresh: Arc<Freshness>,
) -> std::io::Result<(watch::Receiver<Option<Ready>>, std::thread::JoinHandle<()>)> {
    let (tx, rx) = watch::channel(None);
    let handle = std::thread::Builder::new()
        .name("rutter-refresh".into())
        .spawn(move || {
            hold_the_build_for_tests();
            let started = std::time::Instant::now();
            let ready = open_and_refresh(&vault, fresh);
            match &ready {
                Ok(_) => eprintln!(
                    "[rutter] index ready ({} ms).",
                    started.elapsed().as_millis()
                ),
                Err(e) => eprintln!("[rutter] error: {e}"),
            }
            let served = ready.as_ref().ok().cloned();
            let _ = tx.send(Some(ready));
            if served.is_some() {
                build_words_index(&vault);
            }
            if let Some(served) = served {
                let listening = answer_commands(&vault, &served);
                if let Some(l) = &listening {
                    served.fresh.bound_as(l.ino());
                }
                served.fresh.run(&served.index);
            }
        })?;
    Ok((rx, handle))
}

/// Answers commands that ask whether the index is current (`sync_socket`), until the
/// returned value is dropped.
fn answer_commands(vault: &Vault, served: &Arc<Served>) -> Option<sync_socket::Listening> {
    let (db, _) = index::location(vault);
    let served = Arc::clone(served);
    sync_socket::listen(&db, move || {
        let mut index = served.index.lock().unwrap_or_else(PoisonError::into_inner);
        served.fresh.sync_for_client(&mut index)
    })
}

/// Builds the record cache's words index, if it is not built yet, on a connection of its own
/// while calls are answered (spec/mcp.md): a `query` never waits for it (a call that writes
/// waits at most for the build, once). A failure only leaves queries testing every entry.
fn build_words_index(vault: &Vault) {
    let started = std::time::Instant::now();
    match crate::index::Index::open(vault, false).and_then(|i| i.grep_ready()) {
        Ok(true) => eprintln!(
            "[rutter] words index built ({} ms).",
            started.elapsed().as_millis()
        ),
        Ok(false) => {}
        Err(e) => eprintln!("[rutter] words index not built: {e}"),
    }
}

fn open_and_refresh(vault: &Vault, fresh: Arc<Freshness>) -> Ready {
    let mut index =
        crate::recall::source::open_index(vault, false).map_err(|e| NotReady::Open(Arc::new(e)))?;
    if let Some(old) = &index.moved_from {
        eprintln!(
            "[rutter] the index was built when this vault was at {} (moved or copied since); rebuilt it for {}.",
            crate::records::text::one_line_safe(old),
            crate::records::text::one_line_safe(&vault.root.to_string_lossy())
        );
    }
    let refresh = |e| NotReady::Refresh(Arc::new(e));
    reindex::refresh(vault, &mut index, Mode::Auto, false).map_err(refresh)?;
    fresh.watch(&mut index).map_err(refresh)?;
    Ok(Arc::new(Served {
        index: Mutex::new(index),
        fresh,
    }))
}

/// The server: vault, tools, instructions, and the index once it is ready.
#[derive(Clone)]
struct Rutter {
    vault: Vault,
    info: ServerConfig,
    tools: Vec<Tool>,
    ready: watch::Receiver<Option<Ready>>,
    /// Set with `--allow-record`.
    recorder: Option<Arc<Recorder>>,
}

impl Rutter {
    fn new(vault: Vault, ready: watch::Receiver<Option<Ready>>, allow_record: bool) -> Rutter {
        let label = user_label();
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions_for(&label, allow_record));
        let mut tools = tool_list(&label);
        let recorder = allow_record.then(|| {
            tools.push(record_tool::tool());
            Arc::new(Recorder::new(vault.root.clone()))
        });
        Rutter {
            vault,
            info,
            tools,
            ready,
            recorder,
        }
    }

    /// Waits for the background refresh; the index, or why there is none.
    async fn index(&self) -> Ready {
        let mut rx = self.ready.clone();
        let ready = match rx.wait_for(Option::is_some).await {
            Ok(r) => r.clone(),
            Err(_) => None,
        };
        ready.unwrap_or(Err(NotReady::Stopped))
    }
}

/// The three tools with their exact schemas, titles and read-only hints.
pub(crate) fn tool_list(label: &str) -> Vec<Tool> {
    tools::definitions(label)
        .into_iter()
        .map(|d| {
            let schema = match d.input_schema {
                Value::Object(m) => m,
                _ => Map::new(),
            };
            Tool::new(d.name, d.description, Arc::new(schema))
                .with_title(d.title)
                .with_annotations(ToolAnnotations::with_title(d.title).read_only(true))
        })
        .collect()
}

/// A tool call after name lookup (and, for `librarian-recent`, argument validation).
enum Call {
    Search(tools::SearchArgs),
    GetNote(String),
    Recent(Query),
}

/// Why a tool body did not produce its text.
struct Failure(String);

impl ServerHandler for Rutter {
    fn get_info(&self) -> ServerConfig {
        self.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        if let (record_tool::NAME, Some(recorder)) = (request.name.as_ref(), &self.recorder) {
            return record_call(recorder, &args, &context).await;
        }
        // Invalid arguments are tool errors the model can act on, not protocol errors (MCP
        // 2025-11-25, "Error Handling"); an unknown tool stays a protocol error.
        let name = request.name.as_ref();
        let checked = match name {
            "librarian-search" => tools::search_args(&args).map(Call::Search),
            "librarian-get-note" => tools::note_path(&args).map(Call::GetNote),
            "librarian-recent" => tools::recent_query(&args).map(Call::Recent),
            other => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("Unknown tool: {other}"),
                    None,
                ))
            }
        };
        let call = match checked {
            Ok(call) => call,
            Err(e) => return Ok(invalid_arguments(name, e)),
        };
        if matches!(call, Call::Recent(_)) {
            log_use(&self.vault.root, Kind::Recent);
        }
        let served = match self.index().await {
            Ok(s) => s,
            Err(reason) => return Ok(failed(format!("the index is not available: {reason}"))),
        };
        let vault = self.vault.clone();
        let outcome = tokio::task::spawn_blocking(move || run_call(&vault, &served, call))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool failed: {e}"), None))?;
        match outcome {
            Ok(text) => Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into()),
            Err(Failure(why)) => Ok(failed(why)),
        }
    }
}

/// `librarian-record`: validates, then captures off the async runtime (lock, git). It does not
/// wait for the index.
async fn record_call(
    recorder: &Arc<Recorder>,
    args: &Map<String, Value>,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let directive = match record_tool::directive(args) {
        Ok(d) => d,
        Err(e) => return Ok(invalid_arguments(record_tool::NAME, e)),
    };
    let client = context
        .peer
        .peer_info()
        .and_then(|info| record_tool::client_label(&info.client_info.name));
    let recorder = recorder.clone();
    let done = tokio::task::spawn_blocking(move || recorder.record(directive, client))
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool failed: {e}"), None))?;
    let content = vec![ContentBlock::text(done.text)];
    Ok(match done.is_error {
        true => CallToolResult::error(content),
        false => CallToolResult::success(content),
    }
    .into())
}

/// The tool result for arguments a tool refuses (`isError: true`), naming the tool and what
/// to change.
fn invalid_arguments(tool: &str, e: ArgError) -> CallToolResponse {
    failed(format!(
        "Invalid arguments for {tool}: {}. Nothing was done; call it again with the arguments corrected (tools/list has the schema).",
        e.0.trim_end_matches('.')
    ))
}

/// A tool result that reports an internal failure (`isError: true`).
fn failed(why: String) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(why)]).into()
}

/// Runs one tool body against the locked index (blocking: SQLite and file reads). Search and
/// get-note first apply the changes to the notes the server has heard of.
fn run_call(vault: &Vault, served: &Served, call: Call) -> Result<String, Failure> {
    let mut index = served.index.lock().unwrap_or_else(PoisonError::into_inner);
    if matches!(call, Call::Search(_) | Call::GetNote(_)) {
        served
            .fresh
            .before_call(&mut index)
            .map_err(|e| Failure(format!("refreshing the notes failed: {e}")))?;
    }
    match call {
        Call::Search(a) => {
            let (text, engaged) =
                tools::search(&index, &a).map_err(|e| Failure(format!("search failed: {e}")))?;
            if engaged {
                log_use(&vault.root, Kind::SearchSignal);
            }
            Ok(text)
        }
        Call::GetNote(path) => match tools::get_note(vault, &mut index, &path) {
            Ok(Some(text)) => Ok(text),
            // The reference's words, as a tool error: the model should not read it as a note.
            Ok(None) => Err(Failure(format!(
                "Note not found: {}",
                crate::records::text::field_safe(&path)
            ))),
            Err(e) => Err(Failure(format!("reading the note failed: {e}"))),
        },
        Call::Recent(query) => tools::recent(vault, &mut index, &query)
            .map_err(|e| Failure(format!("reading recent sessions failed: {e}"))),
    }
}

/// Appends one use-log event; a failure is a stderr line, never a failed call.
fn log_use(root: &Path, kind: Kind) {
    if let Err(e) = uselog::append(root, crate::clock::now(), kind) {
        eprintln!(
            "[rutter] could not log {} use in {}: {e}",
            kind.as_str(),
            uselog::USE_LOG
        );
    }
}

/// A transport that, at end of input, reports the end only once every request it delivered
/// has been answered (or cancelled by the client). rmcp alone drains in-flight answers for at
/// most a few seconds after EOF; a tool call waiting on a long index build would be dropped.
struct Draining<T> {
    inner: T,
    ended: bool,
    open: Arc<OpenRequests>,
}

/// Requests delivered to the server and not yet answered.
#[derive(Default)]
struct OpenRequests {
    ids: Mutex<HashMap<RequestId, usize>>,
    changed: Notify,
}

impl OpenRequests {
    fn opened(&self, id: &RequestId) {
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        *ids.entry(id.clone()).or_default() += 1;
    }

    fn closed(&self, id: &RequestId) {
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = ids.get_mut(id) {
            *n -= 1;
            if *n == 0 {
                ids.remove(id);
            }
        }
        drop(ids);
        self.changed.notify_waiters();
    }

    fn is_empty(&self) -> bool {
        self.ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_empty()
    }

    /// Returns once no request is open.
    async fn drained(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.is_empty() {
                return;
            }
            changed.await;
        }
    }

    /// Tracks a message from the client: a request opens, a cancellation closes.
    fn note(&self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(r) => self.opened(&r.id),
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification {
                    if let Some(id) = &c.params.request_id {
                        self.closed(id);
                    }
                }
            }
            _ => {}
        }
    }
}

impl<T> Draining<T> {
    fn new(inner: T) -> Draining<T> {
        Draining {
            inner,
            ended: false,
            open: Arc::default(),
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Draining<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(r) => Some(r.id.clone()),
            JsonRpcMessage::Error(e) => e.id.clone(),
            _ => None,
        };
        let sending = self.inner.send(item);
        let open = self.open.clone();
        async move {
            let result = sending.await;
            if let Some(id) = answers {
                open.closed(&id);
            }
            result
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        if !self.ended {
            match self.inner.receive().await {
                Some(message) => {
                    self.open.note(&message);
                    return Some(message);
                }
                None => self.ended = true,
            }
        }
        self.open.drained().await;
        None
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// Debug builds only: `RUTTER_INDEX_BUILD_DELAY_MS` holds the index build back, so a test can
/// show that `initialize` is answered before the index is ready without timing anything.
fn hold_the_build_for_tests() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("RUTTER_INDEX_BUILD_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::VecDeque;
    use std::time::Duration;

    /// An inner transport that delivers the given frames, then reports end of input.
    struct Scripted(VecDeque<ClientJsonRpcMessage>);

    impl Transport<RoleServer> for Scripted {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: ServerJsonRpcMessage,
        ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
            self.0.pop_front()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn scripted(frames: &[Value]) -> Draining<Scripted> {
        let frames = frames
            .iter()
            .map(|f| serde_json::from_value(f.clone()).unwrap())
            .collect();
        Draining::new(Scripted(frames))
    }

    fn answer(id: i64) -> ServerJsonRpcMessage {
        let id: RequestId = serde_json::from_value(json!(id)).unwrap();
        ServerJsonRpcMessage::error(ErrorData::internal_error("x", None), Some(id))
    }

    fn list(id: i64) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
    }

    #[tokio::test]
    async fn end_of_input_waits_until_every_delivered_request_is_answered() {
        let mut t = scripted(&[list(1), list(2)]);
        assert!(t.receive().await.is_some());
        assert!(t.receive().await.is_some());
        let early = tokio::time::timeout(Duration::from_millis(50), t.receive()).await;
        assert!(
            early.is_err(),
            "end of input reported with two requests open"
        );
        t.send(answer(2)).await.unwrap();
        let early = tokio::time::timeout(Duration::from_millis(50), t.receive()).await;
        assert!(
            early.is_err(),
            "end of input reported with one request open"
        );
        t.send(answer(1)).await.unwrap();
        assert!(t.receive().await.is_none());
        assert!(t.receive().await.is_none());
    }

    #[tokio::test]
    async fn a_cancelled_request_needs_no_answer() {
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": 1, "reason": "gone"}});
        let mut t = scripted(&[list(1), cancel]);
        assert!(t.receive().await.is_some());
        assert!(t.receive().await.is_some());
        let end = tokio::time::timeout(Duration::from_secs(5), t.receive()).await;
        assert!(matches!(end, Ok(None)));
        // An answer sent anyway is harmless.
        t.send(answer(1)).await.unwrap();
    }

    #[test]
    fn tools_are_listed_read_only_with_their_schemas() {
        let listed = tool_list("Ada");
        let defs = tools::definitions("Ada");
        assert_eq!(listed.len(), 3);
        for (t, d) in listed.iter().zip(defs) {
            assert_eq!(t.name, d.name);
            assert_eq!(Value::Object((*t.input_schema).clone()), d.input_schema);
            let a = t.annotations.as_ref().unwrap();
            assert_eq!(
                (a.read_only_hint, a.title.as_deref()),
                (Some(true), Some(d.title))
            );
        }
    }
}
