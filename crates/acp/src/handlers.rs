//! The agent's JSON-RPC methods. Handlers hold the SDK's dispatch loop, so a prompt's turn
//! runs in a task of its own and answers the request when it ends; everything else answers
//! at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, CancelNotification,
    CloseSessionRequest, CloseSessionResponse, ConfigOptionUpdate, CurrentModeUpdate,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionConfigOptionValue, SessionInfo, SessionListCapabilities, SessionResumeCapabilities,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionConfigOptionResponse,
    SetSessionModeRequest, SetSessionModeResponse, UnstructuredCommandInput,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Client, Error};
use cairn_runtime::host::SessionHandle;

use crate::modes;
use crate::state::{invalid, lock, Live, State};
use crate::turn::send;
use crate::updates::Mapper;

/// The id of the one authentication method: keys come from `cairn auth set`.
const AUTH_METHOD: &str = "cairn-auth-set";

/// The agent's handlers over `state`.
pub(crate) fn agent(
    state: Arc<State>,
) -> agent_client_protocol::v1::Builder<Agent, impl agent_client_protocol::HandleDispatchFrom<Client>>
{
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11) = (
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state.clone(),
        state,
    );
    Agent
        .v1()
        .name("cairn")
        .on_receive_request(
            async move |req: InitializeRequest, responder, _cx| {
                *lock(&s1.client) = req.client_capabilities.clone();
                responder.respond(initialize(&req))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_req: AuthenticateRequest, responder, _cx| match lock(&s2.blocked).clone() {
                Some(reason) => responder.respond_with_error(auth_error(&reason)),
                None => responder.respond(AuthenticateResponse::new()),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: NewSessionRequest, responder, cx| {
                let servers = crate::mcp::editor_servers(&req.mcp_servers);
                let live = match s3.open(req.cwd.clone(), None, servers).await {
                    Ok(l) => l,
                    Err(e) => return responder.respond_with_error(e),
                };
                if let Some(e) = blocked(&s3, &live).await {
                    return responder.respond_with_error(e);
                }
                editor_buffers(&s3, &cx, &live);
                let h = &live.handle;
                // Clients may start a new agent for their next request: the session is on
                // disk before its id is given out.
                if let Err(e) = h.save().await {
                    let _ = s3.close(&h.id()).await;
                    return responder
                        .respond_with_error(Error::internal_error().data(e.to_string()));
                }
                responder.respond(
                    NewSessionResponse::new(h.id())
                        .modes(modes::mode_state(h))
                        .config_options(modes::config_options(h)),
                )?;
                commands(&cx, h);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: LoadSessionRequest, responder, cx| {
                let id = req.session_id.to_string();
                let live = match reopen(&s4, &cx, &req.cwd, &id, &req.mcp_servers).await {
                    Ok(l) => l,
                    Err(e) => return responder.respond_with_error(e),
                };
                let h = &live.handle;
                replay(&cx, h);
                responder.respond(
                    LoadSessionResponse::new()
                        .modes(modes::mode_state(h))
                        .config_options(modes::config_options(h)),
                )?;
                commands(&cx, h);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ResumeSessionRequest, responder, cx| {
                let id = req.session_id.to_string();
                let live = match reopen(&s5, &cx, &req.cwd, &id, &req.mcp_servers).await {
                    Ok(l) => l,
                    Err(e) => return responder.respond_with_error(e),
                };
                let h = &live.handle;
                responder.respond(
                    ResumeSessionResponse::new()
                        .modes(modes::mode_state(h))
                        .config_options(modes::config_options(h)),
                )?;
                commands(&cx, h);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CloseSessionRequest, responder, _cx| match s6
                .close(&req.session_id.to_string())
                .await
            {
                Ok(true) => responder.respond(CloseSessionResponse::new()),
                Ok(false) => responder
                    .respond_with_error(invalid(format!("unknown session `{}`", req.session_id))),
                Err(e) => responder.respond_with_error(e),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ListSessionsRequest, responder, _cx| {
                responder.respond(list(&s7, req.cwd.as_deref()))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: PromptRequest, responder, cx| {
                let live = match s8.live(&req.session_id.to_string()) {
                    Ok(l) => l,
                    Err(e) => return responder.respond_with_error(e),
                };
                let prompt = match crate::prompt::prompt_of(live.handle.workspace(), req.prompt) {
                    Ok(p) => p,
                    Err(m) => return responder.respond_with_error(invalid(m)),
                };
                {
                    let mut busy = lock(&live.busy);
                    if *busy {
                        return responder.respond_with_error(invalid(
                            "a prompt of this session is still running (cancel it first)",
                        ));
                    }
                    *busy = true;
                }
                let state = s8.clone();
                let cx2 = cx.clone();
                cx.spawn(async move {
                    let ran = crate::turn::run(state, live.handle.clone(), cx2, prompt).await;
                    *lock(&live.busy) = false;
                    match ran {
                        Ok(stop) => responder.respond(PromptResponse::new(stop)),
                        Err(e) => responder.respond_with_error(e),
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionModeRequest, responder, cx| {
                let live = match s9.live(&req.session_id.to_string()) {
                    Ok(l) => l,
                    Err(e) => return responder.respond_with_error(e),
                };
                match set_mode(&cx, &live, &req.mode_id.to_string()) {
                    Ok(()) => {
                        saved(&live.handle).await;
                        responder.respond(SetSessionModeResponse::new())
                    }
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |req: SetSessionConfigOptionRequest, responder, cx| {
                let live = match s10.live(&req.session_id.to_string()) {
                    Ok(l) => l,
                    Err(e) => return responder.respond_with_error(e),
                };
                let value = match &req.value {
                    SessionConfigOptionValue::ValueId { value } => value.to_string(),
                    _ => {
                        return responder.respond_with_error(invalid("a select value is expected"))
                    }
                };
                let done = match req.config_id.to_string().as_str() {
                    modes::MODE_OPTION => set_mode(&cx, &live, &value),
                    modes::MODEL_OPTION => {
                        live.handle.set_model(&value);
                        Ok(())
                    }
                    other => Err(invalid(format!("unknown config option `{other}`"))),
                };
                match done {
                    Ok(()) => {
                        saved(&live.handle).await;
                        responder.respond(SetSessionConfigOptionResponse::new(
                            modes::config_options(&live.handle),
                        ))
                    }
                    Err(e) => responder.respond_with_error(e),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                match s11.live(&n.session_id.to_string()) {
                    Ok(live) => live.interrupt(),
                    Err(_) => {
                        tracing::debug!(session = %n.session_id, "cancel of an unknown session")
                    }
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
}

/// When the client serves `fs/read_text_file`, the session's `read_file` reads its unsaved
/// buffers through it (once per session).
fn editor_buffers(state: &State, cx: &ConnectionTo<Client>, live: &Live) {
    if !lock(&state.client).fs.read_text_file {
        return;
    }
    let mut on = lock(&live.buffers);
    if !*on {
        *on = true;
        live.handle
            .read_buffers_through(Arc::new(crate::buffers::ClientBuffers {
                cx: cx.clone(),
                sid: live.handle.id(),
            }));
    }
}

/// Saves the session now (a client may end this process right after its answer).
async fn saved(h: &SessionHandle) {
    if let Err(e) = h.save().await {
        tracing::warn!(session = %h.id(), error = %e, "session not saved");
    }
}

fn initialize(req: &InitializeRequest) -> InitializeResponse {
    let version = req.protocol_version.min(ProtocolVersion::V1);
    let caps = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true).sse(true))
        .session_capabilities(
            SessionCapabilities::new()
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new())
                .close(SessionCloseCapabilities::new()),
        );
    InitializeResponse::new(version)
        .agent_capabilities(caps)
        .auth_methods(vec![AuthMethod::Agent(
            AuthMethodAgent::new(AUTH_METHOD, "API key from `cairn auth set`").description(
                "Cairn reads API keys from the OS keyring or the environment. Run `cairn auth set <provider>` in a terminal; a key never travels over ACP.",
            ),
        )])
        .agent_info(Implementation::new("cairn", env!("CARGO_PKG_VERSION")).title("Cairn"))
}

fn auth_error(reason: &str) -> Error {
    Error::auth_required().data(serde_json::json!({
        "message": format!("{reason}. Run `cairn auth set <provider>` in a terminal (ACP cannot carry a key safely), then start a new session."),
    }))
}

/// `auth_required` when the session cannot run turns for lack of a key (it is closed again).
async fn blocked(state: &Arc<State>, live: &Live) -> Option<Error> {
    let reason = state.key_problem(&live.handle);
    *lock(&state.blocked) = reason.clone();
    let reason = reason?;
    let _ = state.close(&live.handle.id()).await;
    let mut e = auth_error(&reason);
    e.message = format!(
        "{} Run `cairn auth set {}` in a terminal (ACP cannot carry a key), then start a new session.",
        reason.trim_end_matches('.').to_string() + ".",
        live.handle.provider()
    );
    Some(e)
}

/// Session `id` of `cwd` open again (`session/load`, `session/resume`) with the editor's MCP
/// `servers`, its unsaved buffers read through the client when it offers them.
async fn reopen(
    state: &Arc<State>,
    cx: &ConnectionTo<Client>,
    cwd: &Path,
    id: &str,
    servers: &[agent_client_protocol::v1::schema::McpServer],
) -> Result<Arc<Live>, Error> {
    cairn_runtime::store::validate_id(id)
        .map_err(|_| invalid(format!("unknown session `{id}`")))?;
    let servers = crate::mcp::editor_servers(servers);
    let live = state
        .open(cwd.to_path_buf(), Some(id.to_string()), servers)
        .await?;
    let want = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    if live.handle.workspace() != want {
        let _ = state.close(id).await;
        return Err(invalid(format!(
            "session `{id}` belongs to {}, not {}",
            live.handle.workspace().display(),
            cwd.display()
        )));
    }
    if let Some(e) = blocked(state, &live).await {
        return Err(e);
    }
    editor_buffers(state, cx, &live);
    Ok(live)
}

/// Replays the session's history (its newest turns) as updates.
fn replay(cx: &ConnectionTo<Client>, h: &SessionHandle) {
    let sid = h.id();
    let page = match h.history(None, cairn_runtime::history::MAX_PAGE_TURNS) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "history not readable");
            return;
        }
    };
    let mut mapper = Mapper::replay(h.workspace());
    for e in &page.events {
        for u in mapper.map(e) {
            send(cx, &sid, u);
        }
    }
}

/// Sends the session's slash commands: the built-ins, the user's and the project's.
fn commands(cx: &ConnectionTo<Client>, h: &SessionHandle) {
    let list: Vec<AvailableCommand> = cairn_runtime::commands::views(h.workspace())
        .into_iter()
        .map(|c| {
            let hint = c.argument_hint.clone().or_else(|| match c.name.as_str() {
                "mode" => Some("discuss | plan | interactive | auto".into()),
                "model" => Some("model id".into()),
                _ => None,
            });
            AvailableCommand::new(c.name, c.description).input(
                hint.map(|h| AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(h))),
            )
        })
        .collect();
    send(
        cx,
        &h.id(),
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(list)),
    );
}

fn set_mode(cx: &ConnectionTo<Client>, live: &Live, id: &str) -> Result<(), Error> {
    let mode = modes::parse(id).map_err(invalid)?;
    let h = &live.handle;
    h.set_mode(mode);
    let sid = h.id();
    send(
        cx,
        &sid,
        SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode.as_str())),
    );
    send(
        cx,
        &sid,
        SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(modes::config_options(h))),
    );
    Ok(())
}

/// The stored sessions of `cwd` (all when `None`), newest first.
fn list(state: &State, cwd: Option<&Path>) -> ListSessionsResponse {
    let dir: PathBuf = state
        .config
        .options
        .state_dir
        .clone()
        .unwrap_or_else(cairn_runtime::default_state_dir);
    let want = cwd.map(|c| c.canonicalize().unwrap_or_else(|_| c.to_path_buf()));
    let mut all = cairn_runtime::SessionStore::new(&dir)
        .list()
        .unwrap_or_default();
    all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
    ListSessionsResponse::new(
        all.into_iter()
            .filter(|s| want.as_ref().is_none_or(|w| Path::new(&s.workspace) == w))
            .map(|s| {
                SessionInfo::new(s.id, PathBuf::from(&s.workspace))
                    .title((!s.name.is_empty()).then_some(s.name))
                    .updated_at(s.updated_at)
            })
            .collect(),
    )
}
