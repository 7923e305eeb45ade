//! The stdio transport: newline-delimited JSON-RPC frames read with a size bound, each frame
//! triaged ([`super::triage`]) before rmcp sees it, so every request gets an answer for its id
//! (an oversized one, one whose `params` is not an object, one that is not JSON but names its
//! id) and the server keeps serving. Writing is rmcp's own framed writer.
//!
//! Reading is cancellation-safe, as rmcp's is: `receive` is polled inside a `select!`, so the
//! partial frame lives on the struct and bytes are consumed only after they were copied.
//! Answers to broken frames are spawned at once (never lost to a cancelled poll) and awaited
//! before the end of input is reported.

use super::triage::{self, Triage, ID_PREFIX_BYTES, MAX_FRAME_BYTES};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::task::JoinHandle;

/// One frame as read: whole, or the start of one over the limit.
enum Frame {
    Whole(Vec<u8>),
    Oversized(Vec<u8>),
}

/// The server's stdio transport.
pub(crate) struct Frames<R: AsyncRead, W: AsyncWrite> {
    read: BufReader<R>,
    /// The frame read so far (only its first [`ID_PREFIX_BYTES`] once it is over the limit).
    line: Vec<u8>,
    /// The frame being read is over [`MAX_FRAME_BYTES`]: the rest of it is skipped.
    over: bool,
    writer: AsyncRwTransport<RoleServer, tokio::io::Empty, W>,
    /// Answers to broken frames still being written.
    answers: Vec<JoinHandle<Result<(), std::io::Error>>>,
}

impl<R, W> Frames<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// Frames read from `read` and written to `write`.
    pub(crate) fn new(read: R, write: W) -> Frames<R, W> {
        Frames {
            read: BufReader::new(read),
            line: Vec::new(),
            over: false,
            writer: AsyncRwTransport::new_server(tokio::io::empty(), write),
            answers: Vec::new(),
        }
    }

    /// The next frame, or `None` at end of input (a last frame without its newline counts).
    async fn next_frame(&mut self) -> Option<Frame> {
        loop {
            let (consumed, complete) = {
                let available = match self.read.fill_buf().await {
                    Ok(a) => a,
                    Err(e) => {
                        eprintln!("[rutter] error: reading stdin failed: {e}");
                        return self.take();
                    }
                };
                if available.is_empty() {
                    return self.take();
                }
                let newline = memchr::memchr(b'\n', available);
                let take = newline.map_or(available.len(), |i| i + 1);
                absorb(&mut self.line, &mut self.over, &available[..take]);
                (take, newline.is_some())
            };
            self.read.consume(consumed);
            if complete {
                if let Some(frame) = self.take() {
                    return Some(frame);
                }
            }
        }
    }

    /// The frame read so far, leaving the buffer empty.
    fn take(&mut self) -> Option<Frame> {
        let line = std::mem::take(&mut self.line);
        if std::mem::take(&mut self.over) {
            return Some(Frame::Oversized(line));
        }
        (!line.is_empty()).then_some(Frame::Whole(line))
    }

    /// Sends an answer without waiting for it (see the module doc).
    fn answer(&mut self, message: ServerJsonRpcMessage) {
        self.answers.retain(|h| !h.is_finished());
        self.answers.push(tokio::spawn(self.writer.send(message)));
    }

    /// Waits until every answer to a broken frame is written.
    async fn answered(&mut self) {
        while let Some(last) = self.answers.last_mut() {
            let _ = last.await;
            self.answers.pop();
        }
    }
}

/// Adds bytes of the current frame to `line`, keeping only the start of one over the limit
/// (`over` says it is).
fn absorb(line: &mut Vec<u8>, over: &mut bool, bytes: &[u8]) {
    if *over {
        return;
    }
    if line.len() + bytes.len() <= MAX_FRAME_BYTES {
        line.extend_from_slice(bytes);
        return;
    }
    let room = ID_PREFIX_BYTES.saturating_sub(line.len()).min(bytes.len());
    line.extend_from_slice(&bytes[..room]);
    line.truncate(ID_PREFIX_BYTES);
    line.shrink_to_fit();
    *over = true;
}

impl<R, W> Transport<RoleServer> for Frames<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.writer.send(item)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let triaged = match self.next_frame().await {
                Some(Frame::Whole(bytes)) => triage::frame(&bytes),
                Some(Frame::Oversized(prefix)) => triage::oversized(&prefix),
                None => {
                    self.answered().await;
                    return None;
                }
            };
            match triaged {
                Triage::Deliver(message) => return Some(*message),
                Triage::Answer(message) => self.answer(*message),
                Triage::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.answered().await;
        self.writer.close().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tokio::io::AsyncReadExt;

    /// Feeds `input` through the transport; returns the ids delivered and the frames written.
    async fn run(input: Vec<u8>) -> (Vec<Value>, Vec<Value>) {
        let (mut out_read, out_write) = tokio::io::duplex(1 << 16);
        let mut t = Frames::new(std::io::Cursor::new(input), out_write);
        let mut delivered = Vec::new();
        while let Some(m) = t.receive().await {
            delivered.push(serde_json::to_value(&m).unwrap()["id"].clone());
        }
        t.close().await.unwrap();
        drop(t);
        let mut text = String::new();
        out_read.read_to_string(&mut text).await.unwrap();
        let written = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (delivered, written)
    }

    fn list(id: u64) -> String {
        format!(
            "{}\n",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
        )
    }

    #[tokio::test]
    async fn an_oversized_frame_is_answered_and_the_next_one_delivered() {
        let mut input = list(1).into_bytes();
        let query = "x".repeat(MAX_FRAME_BYTES * 2);
        let big = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "librarian-search", "arguments": {"query": query}}});
        input.extend_from_slice(format!("{big}\n").as_bytes());
        input.extend_from_slice(list(3).as_bytes());
        let (delivered, written) = run(input).await;
        assert_eq!(delivered, [json!(1), json!(3)]);
        assert_eq!(written.len(), 1, "{written:?}");
        assert_eq!(
            (
                written[0]["id"].clone(),
                written[0]["error"]["code"].clone()
            ),
            (json!(2), json!(-32600))
        );
    }

    #[tokio::test]
    async fn a_last_frame_without_its_newline_is_read() {
        let mut input = list(1).into_bytes();
        input.extend_from_slice(list(2).trim_end().as_bytes());
        let (delivered, written) = run(input).await;
        assert_eq!(delivered, [json!(1), json!(2)]);
        assert!(written.is_empty());
    }

    #[tokio::test]
    async fn an_oversized_last_frame_without_its_newline_is_answered() {
        let input = format!(
            r#"{{"jsonrpc":"2.0","id":"big","method":"x","params":{{"a":"{}"#,
            "y".repeat(MAX_FRAME_BYTES)
        );
        let (delivered, written) = run(input.into_bytes()).await;
        assert!(delivered.is_empty());
        assert_eq!(written.len(), 1);
        assert_eq!(written[0]["id"], json!("big"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
        /// However a frame's bytes arrive in chunks, what is kept is the whole frame when it
        /// is within the limit, else exactly its first ID_PREFIX_BYTES, marked over.
        #[test]
        fn any_chunking_keeps_a_frame_or_its_start(
            len in proptest::prop_oneof![
                0usize..3000,
                (MAX_FRAME_BYTES - 64)..(MAX_FRAME_BYTES + 64),
                (MAX_FRAME_BYTES * 2)..(MAX_FRAME_BYTES * 2 + 1),
            ],
            cuts in proptest::collection::vec(proptest::prelude::any::<proptest::sample::Index>(), 0..6),
        ) {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(len + 1)).collect();
            at.push(0);
            at.push(len);
            at.sort_unstable();
            let (mut line, mut over) = (Vec::new(), false);
            for w in at.windows(2) {
                absorb(&mut line, &mut over, &bytes[w[0]..w[1]]);
            }
            if len <= MAX_FRAME_BYTES {
                proptest::prop_assert!(!over);
                proptest::prop_assert!(line == bytes);
            } else {
                proptest::prop_assert!(over);
                proptest::prop_assert!(line[..] == bytes[..ID_PREFIX_BYTES]);
            }
        }
    }
}
