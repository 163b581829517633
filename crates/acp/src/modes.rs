//! Cairn's modes as ACP session modes and as session config options (clients read one or
//! the other), and the model as a config option.

use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigSelectOption, SessionMode, SessionModeState,
};
use cairn_protocol::Mode;
use cairn_runtime::host::SessionHandle;

/// The config option id of the mode.
pub(crate) const MODE_OPTION: &str = "mode";
/// The config option id of the model.
pub(crate) const MODEL_OPTION: &str = "model";

const MODES: [(Mode, &str, &str); 4] = [
    (
        Mode::Discuss,
        "Discuss",
        "Read-only conversation: no writes, no commands",
    ),
    (
        Mode::Plan,
        "Plan",
        "Read-only planning: no writes, no commands",
    ),
    (
        Mode::Interactive,
        "Interactive",
        "Every change and command asks first",
    ),
    (
        Mode::Auto,
        "Auto",
        "Changes inside the workspace run without asking (chosen explicitly)",
    ),
];

/// The session's modes, its current one first named.
pub(crate) fn mode_state(h: &SessionHandle) -> SessionModeState {
    SessionModeState::new(
        h.mode().as_str(),
        MODES
            .iter()
            .map(|(m, name, d)| SessionMode::new(m.as_str(), *name).description(*d))
            .collect(),
    )
}

/// The session's config options: its mode and its model.
pub(crate) fn config_options(h: &SessionHandle) -> Vec<SessionConfigOption> {
    let modes: Vec<SessionConfigSelectOption> = MODES
        .iter()
        .map(|(m, name, d)| SessionConfigSelectOption::new(m.as_str(), *name).description(*d))
        .collect();
    let models: Vec<SessionConfigSelectOption> = h
        .offered_models()
        .into_iter()
        .map(|m| SessionConfigSelectOption::new(m.clone(), m))
        .collect();
    vec![
        SessionConfigOption::select(MODE_OPTION, "Mode", h.mode().as_str(), modes)
            .description("What the agent may do without asking"),
        SessionConfigOption::select(MODEL_OPTION, "Model", h.model(), models).description(
            "The model of this session: the endpoint's models (other ids: /model NAME)",
        ),
    ]
}

/// The mode named `id`.
pub(crate) fn parse(id: &str) -> Result<Mode, String> {
    id.parse()
}
