//! initialize, authenticate, session/new, session/prompt streaming, session/cancel,
//! session/set_mode and config options, plans and commands.

use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AuthMethod, AuthenticateRequest, CancelNotification, InitializeRequest, PlanEntryPriority,
    PlanEntryStatus, SessionConfigKind, SessionConfigOptionValue, SessionConfigSelectOptions,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionModeRequest, StopReason,
    ToolCallContent, ToolKind,
};
use cairn_testkit::Reply;
use serde_json::json;

use super::harness::{Answer, Harness};

#[tokio::test]
async fn initialize_negotiates_v1_and_states_what_the_agent_offers() {
    let h = Harness::start().await;
    let r = h.initialize().await;
    assert_eq!(r.protocol_version, ProtocolVersion::V1);
    let caps = &r.agent_capabilities;
    assert!(caps.load_session);
    assert!(caps.prompt_capabilities.image);
    assert!(caps.prompt_capabilities.embedded_context);
    assert!(caps.session_capabilities.list.is_some());
    assert!(caps.session_capabilities.resume.is_some());
    assert!(caps.session_capabilities.close.is_some());
    let info = r.agent_info.expect("agentInfo");
    assert_eq!(info.name, "cairn");
    assert!(!info.version.is_empty());
    // A newer client is answered with the version the agent speaks.
    let newer =
        h.cx.send_request(InitializeRequest::new(ProtocolVersion::from(2u16)))
            .block_task()
            .await
            .unwrap();
    assert_eq!(newer.protocol_version, ProtocolVersion::V1);
    // The one auth method points to `cairn auth set`.
    let method = r.auth_methods.first().expect("an auth method");
    assert!(
        method
            .description()
            .unwrap_or_default()
            .contains("cairn auth set"),
        "{method:?}"
    );
    assert!(matches!(method, AuthMethod::Agent(_)));
    h.finish().await.unwrap();
}

#[tokio::test]
async fn a_session_needs_no_authenticate_when_a_key_is_there() {
    let h = Harness::start().await;
    // No authenticate: session/new works at once.
    let s = h.session().await;
    assert!(!s.session_id.to_string().is_empty());
    // authenticate is answered (nothing to do).
    h.cx.send_request(AuthenticateRequest::new("cairn-auth-set"))
        .block_task()
        .await
        .unwrap();
    h.finish().await.unwrap();
}

#[tokio::test]
async fn session_new_applies_the_workspace_rules() {
    let h = Harness::start().await;
    h.initialize().await;
    let e = h
        .new_session(std::path::Path::new("relative/dir"))
        .await
        .unwrap_err();
    assert!(e.message.contains("absolute"), "{e:?}");
    // The home folder is never a workspace.
    let home = std::env::var("HOME").unwrap();
    let e = h
        .new_session(std::path::Path::new(&home))
        .await
        .unwrap_err();
    assert!(e.message.contains("home folder"), "{e:?}");
    // A missing folder is refused too.
    let e = h
        .new_session(&h.ws.path().join("missing"))
        .await
        .unwrap_err();
    assert!(e.message.contains("not usable"), "{e:?}");
    // The workspace opens, with modes offered both ways.
    let s = h.new_session(h.ws.path()).await.unwrap();
    let modes = s.modes.expect("modes");
    assert_eq!(modes.current_mode_id.to_string(), "interactive");
    let ids: Vec<String> = modes
        .available_modes
        .iter()
        .map(|m| m.id.to_string())
        .collect();
    assert_eq!(ids, ["discuss", "plan", "interactive", "auto"]);
    let opts = s.config_options.expect("config options");
    let mode = opts.iter().find(|o| o.id.to_string() == "mode").unwrap();
    match &mode.kind {
        SessionConfigKind::Select(sel) => assert_eq!(sel.current_value.to_string(), "interactive"),
        other => panic!("{other:?}"),
    }
    assert!(opts.iter().any(|o| o.id.to_string() == "model"));
    // The slash commands follow, built-ins included.
    h.seen
        .wait_for("available commands", |u| {
            u.iter()
                .any(|u| matches!(u, SessionUpdate::AvailableCommandsUpdate(_)))
        })
        .await;
    let names: Vec<String> = h
        .seen
        .updates()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::AvailableCommandsUpdate(c) => Some(
                c.available_commands
                    .iter()
                    .map(|c| c.name.clone())
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    for b in ["undo", "compact", "mode", "model", "plan", "review"] {
        assert!(names.iter().any(|n| n == b), "{b} in {names:?}");
    }
    h.finish().await.unwrap();
}

#[tokio::test]
async fn project_commands_are_offered_too() {
    let h = Harness::start().await;
    std::fs::create_dir_all(h.ws.path().join(".agent/commands")).unwrap();
    std::fs::write(
        h.ws.path().join(".agent/commands/ship.md"),
        "---\ndescription: ship it\nargument-hint: VERSION\n---\nShip $ARGUMENTS\n",
    )
    .unwrap();
    h.session().await;
    h.seen
        .wait_for("the project's command", |u| {
            u.iter().any(|u| match u {
                SessionUpdate::AvailableCommandsUpdate(c) => c
                    .available_commands
                    .iter()
                    .any(|c| c.name == "ship" && c.description == "ship it" && c.input.is_some()),
                _ => false,
            })
        })
        .await;
    h.finish().await.unwrap();
}

#[tokio::test]
async fn a_prompt_streams_its_reply_and_thoughts() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.mock.push(
        Reply::text("Hello from Cairn")
            .with_reasoning("thinking it over")
            .with_usage(100, 20),
    );
    let r = h.prompt(&sid, "hi").await.unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert_eq!(h.seen.text(), "Hello from Cairn");
    assert!(h
        .seen
        .updates()
        .iter()
        .any(|u| matches!(u, SessionUpdate::AgentThoughtChunk(_))));
    // Usage: the context used after the reply, the window, and the sandbox state.
    let usage = h
        .seen
        .updates()
        .iter()
        .find_map(|u| match u {
            SessionUpdate::UsageUpdate(u) => Some(u.clone()),
            _ => None,
        })
        .expect("a usage update");
    assert_eq!(usage.used, 120);
    assert!(usage.size > 0);
    let sandbox = usage.meta.as_ref().unwrap()["cairn"]["sandbox"].to_string();
    assert!(sandbox.contains("sandbox"), "{sandbox}");
    // The model saw the prompt.
    let req = h.mock.requests();
    assert!(req.last().unwrap().body.to_string().contains("hi"));
    h.finish().await.unwrap();
}

#[tokio::test]
async fn a_command_is_an_execute_call_whose_output_is_text() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.mock.push(Reply::tool_call(
        "c1",
        "run_shell",
        json!({"command": "echo out-of-shell"}),
    ));
    h.mock.push(Reply::text("done"));
    let r = h.prompt(&sid, "run it").await.unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let ups = h.seen.updates();
    let call = ups
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCall(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(call.kind, ToolKind::Execute);
    assert!(call.title.contains("echo out-of-shell"), "{}", call.title);
    let perm = h.seen.permissions.lock().unwrap()[0].clone();
    assert_eq!(perm.tool_call.fields.kind, Some(ToolKind::Execute));
    let last = ups
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(c) if c.fields.status.is_some() => Some(c.clone()),
            _ => None,
        })
        .next_back()
        .unwrap();
    let content = last.fields.content.unwrap();
    let shown: String = content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Content(c) => Some(format!("{:?}", c.content)),
            _ => None,
        })
        .collect();
    assert!(shown.contains("out-of-shell"), "{shown}");
    h.finish().await.unwrap();
}

#[tokio::test]
async fn cancel_during_a_long_command_stops_the_turn_within_two_seconds() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.answer_with(Answer::Select("allow_once"));
    h.mock.push(Reply::tool_call(
        "c1",
        "run_shell",
        json!({"command": "sleep 60"}),
    ));
    let cx = h.cx.clone();
    let s = sid.clone();
    let prompt = tokio::spawn(async move {
        cx.send_request(agent_client_protocol::v1::schema::PromptRequest::new(
            s,
            vec!["sleep".into()],
        ))
        .block_task()
        .await
    });
    h.seen
        .wait_for("the command running", |u| {
            u.iter().any(|u| matches!(u, SessionUpdate::ToolCallUpdate(c)
                if c.fields.status == Some(agent_client_protocol::v1::schema::ToolCallStatus::InProgress)))
        })
        .await;
    let t = Instant::now();
    h.cx.send_notification(CancelNotification::new(sid.clone()))
        .unwrap();
    let r = tokio::time::timeout(Duration::from_secs(5), prompt)
        .await
        .expect("prompt answered")
        .unwrap()
        .unwrap();
    assert_eq!(r.stop_reason, StopReason::Cancelled);
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    // The session keeps serving.
    h.mock.push(Reply::text("again"));
    h.seen.clear();
    let r = h.prompt(&sid, "go on").await.unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert!(h.seen.text().contains("again"));
    h.finish().await.unwrap();
}

#[tokio::test]
async fn modes_switch_by_set_mode_and_by_config_option() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.cx.send_request(SetSessionModeRequest::new(sid.clone(), "plan"))
        .block_task()
        .await
        .unwrap();
    h.seen
        .wait_for("current mode plan", |u| {
            u.iter().any(|u| {
                matches!(u, SessionUpdate::CurrentModeUpdate(m)
                if m.current_mode_id.to_string() == "plan")
            })
        })
        .await;
    let r =
        h.cx.send_request(SetSessionConfigOptionRequest::new(
            sid.clone(),
            "mode",
            SessionConfigOptionValue::value_id("auto"),
        ))
        .block_task()
        .await
        .unwrap();
    let mode = r
        .config_options
        .iter()
        .find(|o| o.id.to_string() == "mode")
        .unwrap();
    match &mode.kind {
        SessionConfigKind::Select(s) => assert_eq!(s.current_value.to_string(), "auto"),
        other => panic!("{other:?}"),
    }
    h.seen
        .wait_for("current mode auto", |u| {
            u.iter().any(|u| {
                matches!(u, SessionUpdate::CurrentModeUpdate(m)
                if m.current_mode_id.to_string() == "auto")
            })
        })
        .await;
    let e =
        h.cx.send_request(SetSessionModeRequest::new(sid.clone(), "yolo"))
            .block_task()
            .await
            .unwrap_err();
    assert!(e.message.contains("unknown mode"), "{e:?}");
    // `/mode discuss` from the client switches too, and says so.
    let r = h.prompt(&sid, "/mode discuss").await.unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    h.seen
        .wait_for("current mode discuss", |u| {
            u.iter().any(|u| {
                matches!(u, SessionUpdate::CurrentModeUpdate(m)
                if m.current_mode_id.to_string() == "discuss")
            })
        })
        .await;
    h.finish().await.unwrap();
}

#[tokio::test]
async fn the_todo_list_is_a_plan_with_priorities() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.mock.push(Reply::tool_call(
        "t1",
        "todo_write",
        json!({"todos": [
            {"content": "read the code", "status": "completed"},
            {"content": "fix the bug", "status": "in_progress"},
            {"content": "add a test", "status": "pending"}
        ]}),
    ));
    h.mock.push(Reply::text("planned"));
    h.prompt(&sid, "plan it").await.unwrap();
    let plan = h
        .seen
        .updates()
        .iter()
        .find_map(|u| match u {
            SessionUpdate::Plan(p) => Some(p.clone()),
            _ => None,
        })
        .expect("a plan");
    assert_eq!(plan.entries.len(), 3);
    assert_eq!(plan.entries[0].status, PlanEntryStatus::Completed);
    assert_eq!(plan.entries[1].status, PlanEntryStatus::InProgress);
    assert_eq!(plan.entries[2].content, "add a test");
    assert!(plan
        .entries
        .iter()
        .all(|e| e.priority == PlanEntryPriority::Medium));
    // On the wire each entry carries its priority (clients drop entries without one).
    let wire = serde_json::to_value(&plan).unwrap();
    assert_eq!(wire["entries"][0]["priority"], "medium");
    h.finish().await.unwrap();
}

#[tokio::test]
async fn resource_links_become_mentions_and_embedded_resources_context() {
    use agent_client_protocol::v1::schema::{
        ContentBlock, EmbeddedResource, EmbeddedResourceResource, PromptRequest, ResourceLink,
        TextResourceContents,
    };
    let h = Harness::start().await;
    std::fs::write(h.ws.path().join("notes.txt"), "linked file body\n").unwrap();
    let sid = h.session().await.session_id.to_string();
    h.mock.push(Reply::text("seen"));
    let uri = format!("file://{}", h.ws.path().join("notes.txt").display());
    let blocks = vec![
        ContentBlock::from("look at".to_string()),
        ContentBlock::ResourceLink(ResourceLink::new("notes.txt", uri)),
        ContentBlock::Resource(EmbeddedResource::new(
            EmbeddedResourceResource::TextResourceContents(TextResourceContents::new(
                "embedded selection",
                "file:///elsewhere/sel.rs",
            )),
        )),
    ];
    let r =
        h.cx.send_request(PromptRequest::new(sid.clone(), blocks))
            .block_task()
            .await
            .unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    let body = h.mock.requests().last().unwrap().body.to_string();
    assert!(body.contains("linked file body"), "{body}");
    assert!(body.contains("embedded selection"), "{body}");
    h.finish().await.unwrap();
}

#[tokio::test]
async fn the_model_option_offers_the_endpoints_models_and_switches() {
    let h = Harness::start().await;
    h.mock.serve_models(&["m-large", "m", "m-small"]);
    let s = h.session().await;
    let sid = s.session_id.to_string();
    let opts = s.config_options.expect("config options");
    let model = opts.iter().find(|o| o.id.to_string() == "model").unwrap();
    let values = match &model.kind {
        SessionConfigKind::Select(sel) => {
            assert_eq!(sel.current_value.to_string(), "m");
            match &sel.options {
                SessionConfigSelectOptions::Ungrouped(o) => {
                    o.iter().map(|o| o.value.to_string()).collect::<Vec<_>>()
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    };
    // The session's own model first, then the endpoint's, each once.
    assert_eq!(values, ["m", "m-large", "m-small"]);
    // Picking one switches the session's model for its next request.
    h.cx.send_request(SetSessionConfigOptionRequest::new(
        sid.clone(),
        "model",
        "m-large",
    ))
    .block_task()
    .await
    .unwrap();
    h.mock.push(Reply::text("ok"));
    h.prompt(&sid, "hi").await.unwrap();
    assert_eq!(h.mock.requests().last().unwrap().body["model"], "m-large");
    h.finish().await.unwrap();
}
