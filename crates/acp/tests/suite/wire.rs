//! The raw wire: a malformed line gets a JSON-RPC error and the agent keeps serving; the
//! end of input ends the agent cleanly.

use std::time::Duration;

use cairn_acp::{AcpAgent, AcpConfig};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

async fn line(r: &mut (impl AsyncBufReadExt + Unpin)) -> Value {
    let mut s = String::new();
    tokio::time::timeout(Duration::from_secs(10), r.read_line(&mut s))
        .await
        .expect("a line")
        .unwrap();
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

#[tokio::test]
async fn a_malformed_line_gets_an_error_and_the_agent_keeps_serving() {
    let state = tempfile::tempdir().unwrap();
    let agent = AcpAgent::new(AcpConfig {
        options: cairn_runtime::RunOptions {
            state_dir: Some(state.path().to_path_buf()),
            ..Default::default()
        },
        llm: None,
    });
    let (client, agent_io) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(agent_io);
    let served = tokio::spawn(async move { agent.serve(ar, aw).await });
    let (cr, mut cw) = tokio::io::split(client);
    let mut cr = BufReader::new(cr);
    cw.write_all(b"this is not json\n").await.unwrap();
    let err = line(&mut cr).await;
    assert_eq!(err["jsonrpc"], "2.0");
    assert_eq!(err["error"]["code"], -32700, "{err}");
    // Still serving: initialize works.
    cw.write_all(
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":1}}\n",
    )
    .await
    .unwrap();
    let ok = line(&mut cr).await;
    assert_eq!(ok["id"], 1);
    assert_eq!(ok["result"]["protocolVersion"], 1, "{ok}");
    assert_eq!(ok["result"]["agentCapabilities"]["loadSession"], true);
    // A request with an unknown method is an error too.
    cw.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"no/such\",\"params\":{}}\n")
        .await
        .unwrap();
    let err = line(&mut cr).await;
    assert_eq!(err["id"], 7);
    assert_eq!(err["error"]["code"], -32601, "{err}");
    // The end of input ends the agent, cleanly.
    drop(cw);
    drop(cr);
    let r = tokio::time::timeout(Duration::from_secs(10), served)
        .await
        .expect("the agent ends")
        .unwrap();
    assert!(r.is_ok(), "{r:?}");
}
