//! A real MCP server built on rmcp's server side, for tests (the `cairn-mcp-test-server`
//! binary and in-process HTTP tests): well-behaved tools plus every fault the manager must
//! survive, selected with `--fault` arguments or `CAIRN_TEST_MCP_FAULTS` (comma-separated).
//!
//! Tools: `echo {text}`, `slow {steps, delay_ms}` (progress notifications), `fail {message}`
//! (an `isError` result), `image` (a PNG), `resource` (embedded text + link), `big {bytes}`
//! (default 10 MB of text), `crash` (exits mid-call), `hang` (never answers), `pid`,
//! `grandchild_pid`, `add_tool` (adds `late_tool` and sends `tools/list_changed`), `headers`
//! (HTTP request headers, when served over HTTP), `sample {prompt, includeContext}` (asks the
//! client's model).
//!
//! Faults: `hang-initialize`, `exit-initialize`, `flood-stderr`, `duplicate-tools`,
//! `slow-start=MS`, `grandchild` (spawns a `sleep` that must die with the server).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProgressNotificationParam, Resource, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{json, Value};

/// Faults the server injects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Never answer `initialize`.
    pub hang_initialize: bool,
    /// Exit (status 3) when `initialize` arrives, after a line on stderr.
    pub exit_initialize: bool,
    /// Write to stderr without pause for as long as the process lives.
    pub flood_stderr: bool,
    /// List `echo` twice, plus `a.b` and `a_b` (which sanitise to the same name).
    pub duplicate_tools: bool,
    /// Sleep this long before serving.
    pub slow_start_ms: u64,
    /// Spawn a `sleep` child at start (`grandchild_pid` reports it).
    pub grandchild: bool,
    /// Answer `initialize` with [`TEST_INSTRUCTIONS`].
    pub instructions: bool,
}

/// The `instructions` the test server gives with the `instructions` fault.
pub const TEST_INSTRUCTIONS: &str =
    "Call `echo` to repeat text back. (CAIRN-TEST-SERVER-INSTRUCTIONS)";

impl Faults {
    /// Parses `--fault X` arguments and the `CAIRN_TEST_MCP_FAULTS` variable.
    pub fn from_args_and_env(args: &[String]) -> Faults {
        let mut names: Vec<String> = Vec::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            if a == "--fault" {
                if let Some(v) = it.next() {
                    names.push(v.clone());
                }
            } else if let Some(v) = a.strip_prefix("--fault=") {
                names.push(v.to_string());
            }
        }
        if let Ok(v) = std::env::var("CAIRN_TEST_MCP_FAULTS") {
            names.extend(v.split(',').map(|s| s.trim().to_string()));
        }
        let mut f = Faults::default();
        for n in names {
            match n.as_str() {
                "hang-initialize" => f.hang_initialize = true,
                "exit-initialize" => f.exit_initialize = true,
                "flood-stderr" => f.flood_stderr = true,
                "duplicate-tools" => f.duplicate_tools = true,
                "grandchild" => f.grandchild = true,
                "instructions" => f.instructions = true,
                other => {
                    if let Some(ms) = other.strip_prefix("slow-start=") {
                        f.slow_start_ms = ms.parse().unwrap_or(0);
                    }
                }
            }
        }
        f
    }
}

/// The test server's handler.
#[derive(Clone)]
pub struct TestServer {
    faults: Faults,
    late_tool: Arc<AtomicBool>,
    grandchild_pid: Arc<AtomicU32>,
}

impl TestServer {
    /// A server with these faults.
    pub fn new(faults: Faults) -> Self {
        TestServer {
            faults,
            late_tool: Arc::new(AtomicBool::new(false)),
            grandchild_pid: Arc::new(AtomicU32::new(0)),
        }
    }

    /// Starts the side effects of the faults (stderr flood, grandchild).
    pub fn start_side_effects(&self) {
        if self.faults.flood_stderr {
            std::thread::spawn(|| {
                use std::io::Write;
                let line = "stderr flood: ".to_string() + &"x".repeat(1000) + "\n";
                let burst = line.repeat(64);
                let mut err = std::io::stderr();
                // ~64 KB per millisecond: far more than any log keeps, without pinning a core.
                loop {
                    if err.write_all(burst.as_bytes()).is_err() {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            });
        }
        if self.faults.grandchild {
            if let Ok(child) = std::process::Command::new("sleep").arg("600").spawn() {
                self.grandchild_pid.store(child.id(), Ordering::SeqCst);
            }
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let mut v = vec![
            tool(
                "echo",
                "Echoes `text` back.",
                json!({"text": {"type": "string"}}),
                &["text"],
            ),
            tool(
                "slow",
                "Sends `steps` progress notifications `delay_ms` apart, then answers.",
                json!({"steps": {"type": "integer"}, "delay_ms": {"type": "integer"}}),
                &[],
            ),
            tool(
                "fail",
                "Returns an error result.",
                json!({"message": {"type": "string"}}),
                &[],
            ),
            tool("image", "Returns a small PNG image.", json!({}), &[]),
            tool(
                "resource",
                "Returns an embedded resource and a link.",
                json!({}),
                &[],
            ),
            tool(
                "big",
                "Returns `bytes` of text (default 10 MB).",
                json!({"bytes": {"type": "integer"}}),
                &[],
            ),
            tool(
                "crash",
                "Exits the server in the middle of the call.",
                json!({}),
                &[],
            ),
            tool("hang", "Never answers.", json!({}), &[]),
            tool("pid", "The server's process id.", json!({}), &[]),
            tool(
                "grandchild_pid",
                "The pid of the spawned sleep child (0 = none).",
                json!({}),
                &[],
            ),
            tool(
                "add_tool",
                "Adds `late_tool` and notifies the client.",
                json!({}),
                &[],
            ),
            tool(
                "sample",
                "Asks the client's model `prompt` (sampling), with `includeContext` when given.",
                json!({"prompt": {"type": "string"}, "includeContext": {"type": "string"}}),
                &[],
            ),
            tool(
                "headers",
                "The HTTP request headers of this call.",
                json!({}),
                &[],
            ),
        ];
        if self.late_tool.load(Ordering::SeqCst) {
            v.push(tool("late_tool", "Appears after add_tool.", json!({}), &[]));
        }
        if self.faults.duplicate_tools {
            v.push(tool(
                "echo",
                "A second echo (duplicate name).",
                json!({"text": {"type": "string"}}),
                &[],
            ));
            v.push(tool("a.b", "Dotted name.", json!({}), &[]));
            v.push(tool("a_b", "Underscored name.", json!({}), &[]));
        }
        v
    }
}

fn tool(name: &'static str, description: &'static str, props: Value, required: &[&str]) -> Tool {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), props);
    if !required.is_empty() {
        schema.insert("required".into(), json!(required));
    }
    Tool::new(name, description, schema)
}

fn text(s: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(s)]).into())
}

/// A 1×1 transparent PNG.
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)]
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        let mut info = InitializeResult::new(caps);
        info.server_info = Implementation::new("cairn-mcp-test-server", env!("CARGO_PKG_VERSION"));
        if self.faults.instructions {
            info.instructions = Some(TEST_INSTRUCTIONS.into());
        }
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if self.faults.hang_initialize {
            std::future::pending::<()>().await;
        }
        if self.faults.exit_initialize {
            eprintln!("fatal: TEST_API_KEY is not set; cannot start");
            std::process::exit(3);
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.clone().unwrap_or_default();
        let int = |k: &str, d: u64| args.get(k).and_then(Value::as_u64).unwrap_or(d);
        let string =
            |k: &str, d: &str| args.get(k).and_then(Value::as_str).unwrap_or(d).to_string();
        match request.name.as_ref() {
            "echo" => {
                // `"log": "LEVEL"` sends the text as a log message at that level first.
                if let Some(level) = args.get("log").and_then(Value::as_str) {
                    #[allow(deprecated)]
                    if let Some(level) = crate::server_log::parse_level(level) {
                        let mut note = rmcp::model::LoggingMessageNotificationParam::new(
                            level,
                            json!(string("text", "")),
                        );
                        note.logger = Some("probe".into());
                        let _ = context.peer.notify_logging_message(note).await;
                    }
                }
                text(string("text", ""))
            }
            "slow" => {
                let steps = int("steps", 3);
                let delay = int("delay_ms", 100);
                let token = context.meta.get_progress_token();
                for step in 1..=steps {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    if let Some(t) = &token {
                        let _ = context
                            .peer
                            .notify_progress(
                                ProgressNotificationParam::new(t.clone(), step as f64)
                                    .with_total(steps as f64)
                                    .with_message(format!("step {step} of {steps}")),
                            )
                            .await;
                    }
                }
                text(format!("done after {steps} steps"))
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(string(
                "message",
                "the tool failed on purpose",
            ))])
            .into()),
            "image" => Ok(CallToolResult::success(vec![
                ContentBlock::text("here is the image"),
                ContentBlock::image(PNG_1X1, "image/png"),
            ])
            .into()),
            "resource" => {
                let mut link = Resource::new("file:///tmp/report.txt", "report.txt");
                link.mime_type = Some("text/plain".into());
                Ok(CallToolResult::success(vec![
                    ContentBlock::embedded_text("mem://notes/1", "the note's text"),
                    ContentBlock::resource_link(link),
                ])
                .into())
            }
            "big" => text("x".repeat(int("bytes", 10 * 1024 * 1024) as usize)),
            "crash" => {
                eprintln!("about to crash in the middle of a call");
                tokio::time::sleep(Duration::from_millis(50)).await;
                std::process::exit(7);
            }
            "hang" => {
                std::future::pending::<()>().await;
                text("unreachable")
            }
            #[allow(deprecated)] // Sampling is part of 2025-11-25.
            "sample" => {
                let mut params = rmcp::model::CreateMessageRequestParams::new(
                    vec![rmcp::model::SamplingMessage::user_text(string(
                        "prompt", "hello",
                    ))],
                    50,
                )
                .with_system_prompt("You are a test server.");
                if let Some(c) = args.get("includeContext") {
                    params.include_context = serde_json::from_value(c.clone()).ok();
                }
                match context.peer.create_message(params).await {
                    Ok(r) => {
                        let said: Vec<String> = r
                            .message
                            .content
                            .into_vec()
                            .into_iter()
                            .filter_map(|b| b.as_text().map(|t| t.text.clone()))
                            .collect();
                        text(format!("model {} said: {}", r.model, said.join(" ")))
                    }
                    Err(e) => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                        "sampling failed: {e}"
                    ))])
                    .into()),
                }
            }
            "pid" => text(std::process::id().to_string()),
            "grandchild_pid" => text(self.grandchild_pid.load(Ordering::SeqCst).to_string()),
            "add_tool" => {
                self.late_tool.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("added late_tool")
            }
            "late_tool" => text("late tool answered"),
            "headers" => {
                let headers = context
                    .extensions
                    .get::<http::request::Parts>()
                    .map(|p| {
                        p.headers
                            .iter()
                            .map(|(k, v)| format!("{}: {}", k, v.to_str().unwrap_or("?")))
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default();
                text(headers)
            }
            "a.b" | "a_b" => text(format!("called {}", request.name)),
            other => Err(ErrorData::invalid_params(
                format!("no tool named {other}"),
                None,
            )),
        }
    }
}

/// Runs the server over stdin/stdout until the client disconnects.
pub async fn serve_stdio(server: TestServer) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::ServiceExt;
    if server.faults.slow_start_ms > 0 {
        tokio::time::sleep(Duration::from_millis(server.faults.slow_start_ms)).await;
    }
    server.start_side_effects();
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

/// The server over Streamable HTTP, as a service to mount in a router (one [`TestServer`]
/// with `faults` per session).
pub fn http_service(
    faults: Faults,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    TestServer,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    rmcp::transport::streamable_http_server::StreamableHttpService::new(
        move || Ok(TestServer::new(faults.clone())),
        std::sync::Arc::new(Default::default()),
        Default::default(),
    )
}
