//! MCP servers an editor passes with `session/new` run for that session: their tools reach
//! the model and their answers come back, with no trust prompt (the editor's configuration is
//! the user's).

use agent_client_protocol::v1::schema::{McpServer, McpServerHttp, NewSessionRequest};
use cairn_testkit::Reply;
use serde_json::json;

use super::harness::Harness;

#[tokio::test]
async fn an_mcp_server_the_editor_passes_runs_for_the_session() {
    // The editor's server: Cairn's test MCP server over Streamable HTTP on 127.0.0.1.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = axum::Router::new().route_service(
        "/mcp",
        cairn_mcp::testing::http_service(cairn_mcp::testing::Faults::default()),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });

    let h = Harness::start().await;
    h.initialize().await;
    let session =
        h.cx.send_request(
            NewSessionRequest::new(h.ws.path().to_path_buf())
                .mcp_servers(vec![McpServer::Http(McpServerHttp::new("docs", url))]),
        )
        .block_task()
        .await
        .unwrap();
    let sid = session.session_id.to_string();
    h.mock.push(Reply::tool_call(
        "c1",
        "mcp__docs__echo",
        json!({"text": "ECHO-FROM-THE-EDITORS-SERVER"}),
    ));
    h.mock.push(Reply::text("It answered."));
    h.prompt(&sid, "ask the docs server").await.unwrap();
    // The first request offered its tools; the second carried its answer.
    let requests = h.mock.requests();
    assert!(
        requests[0].body["tools"]
            .to_string()
            .contains("mcp__docs__echo"),
        "{}",
        requests[0].body["tools"]
    );
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("ECHO-FROM-THE-EDITORS-SERVER"), "{last}");
    h.finish().await.unwrap();
}
