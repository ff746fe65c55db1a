//! The stdio lines between the client and the SDK. The SDK drops a line that is not JSON, or
//! not a JSON-RPC message, without a word; JSON-RPC 2.0 asks for an error response (-32700
//! parse error, -32600 invalid request), and a client waiting on a garbled request should get
//! one. So each line from the client is checked here first: a bad one is answered here, a good
//! one passes to the SDK; both kinds of answer reach stdout whole, one line at a time.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Room for one large message in flight in each direction.
const PIPE_BYTES: usize = 1 << 20;

/// The SDK's ends (what it reads, where it writes), and the task that moves lines between
/// them and the real `input`/`output`; the task ends when the client closes its side.
pub fn frame<R, W>(
    input: R,
    output: W,
) -> (
    (DuplexStream, DuplexStream),
    impl std::future::Future<Output = ()>,
)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_sdk, sdk_reads) = tokio::io::duplex(PIPE_BYTES);
    let (sdk_writes, from_sdk) = tokio::io::duplex(PIPE_BYTES);
    let (errors, rejected) = mpsc::unbounded_channel::<String>();
    let pump = async move {
        let reader = read_client(input, to_sdk, errors);
        let writer = write_client(from_sdk, rejected, output);
        // The reader ends at the client's EOF (closing the SDK's input, so the SDK stops and
        // closes its output); the writer then drains what is left and ends too.
        tokio::join!(reader, writer);
    };
    ((sdk_reads, sdk_writes), pump)
}

async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    mut to_sdk: DuplexStream,
    errors: mpsc::UnboundedSender<String>,
) {
    let mut lines = BufReader::new(input).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        match reject(&line) {
            Some(error) => {
                if errors.send(error.to_string()).is_err() {
                    break;
                }
            }
            None => {
                let sent = async {
                    to_sdk.write_all(line.as_bytes()).await?;
                    to_sdk.write_all(b"\n").await
                };
                if sent.await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to_sdk.shutdown().await;
}

async fn write_client<W: AsyncWrite + Unpin>(
    from_sdk: DuplexStream,
    mut rejected: mpsc::UnboundedReceiver<String>,
    mut output: W,
) {
    let mut answers = BufReader::new(from_sdk).lines();
    let (mut sdk_open, mut errors_open) = (true, true);
    while sdk_open || errors_open {
        let line = tokio::select! {
            answer = answers.next_line(), if sdk_open => match answer {
                Ok(Some(line)) => line,
                _ => { sdk_open = false; continue; }
            },
            error = rejected.recv(), if errors_open => match error {
                Some(line) => line,
                None => { errors_open = false; continue; }
            },
        };
        let written = async {
            output.write_all(line.as_bytes()).await?;
            output.write_all(b"\n").await?;
            output.flush().await
        };
        if written.await.is_err() {
            break;
        }
    }
}

/// The error response for a line that is not a JSON-RPC 2.0 message, or `None` for one that
/// is (the SDK judges the rest: an unknown method, bad parameters).
fn reject(line: &str) -> Option<Value> {
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(e) => return Some(error(Value::Null, -32700, format!("parse error: {e}"))),
    };
    let id = match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let well_formed = message.get("jsonrpc") == Some(&json!("2.0"))
        && (message.get("method").is_some_and(Value::is_string)
            || (message.get("id").is_some()
                && (message.get("result").is_some() || message.get("error").is_some())));
    if well_formed {
        None
    } else {
        Some(error(
            id,
            -32600,
            "invalid request: not a JSON-RPC 2.0 request, notification or response (batches are not supported)".into(),
        ))
    }
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::reject;

    #[test]
    fn a_line_that_is_not_json_rpc_gets_the_error_json_rpc_names() {
        let parse = reject("{not json").expect("rejected");
        assert_eq!(parse["error"]["code"], -32700);
        assert_eq!(parse["id"], serde_json::Value::Null);
        let invalid = reject(r#"{"id": 7, "method": "tools/list"}"#).expect("rejected");
        assert_eq!(
            (invalid["error"]["code"].as_i64(), invalid["id"].as_i64()),
            (Some(-32600), Some(7))
        );
        assert!(reject("[]").is_some());
        assert!(reject(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_none());
        assert!(reject(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).is_none());
        assert!(reject(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#).is_none());
    }
}
