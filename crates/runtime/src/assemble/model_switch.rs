//! A model switch re-assembles what depends on the model: the context window (unless it was
//! set explicitly) and compaction thresholds, the image tools (`read_image` for a model that
//! sees images, else `describe_image`; `media` describes images through the new model), and
//! says so at the start of the next turn (`model_switched`).

use cairn_protocol::{Event, ModelSwitched};

use super::{defaults, Assembled};

/// The built-in tools whose behaviour follows the session model's vision.
const VISION_TOOLS: [&str; 3] = ["media", "read_image", "describe_image"];

impl Assembled {
    /// Switches the session to `model`, with what depends on it: the context window (unless
    /// it was set explicitly), the compaction thresholds and the image tools follow the new
    /// model's; prices follow by model already. The next turn says so (`model_switched`).
    /// The new context window, for the faces to say.
    pub fn switch_model(&self, model: &str) -> u64 {
        let previous = self.session.model();
        self.session.set_model(model.to_string());
        let mut c = defaults::compaction_config(model, self.window_override);
        c.lang = self.session.compaction().lang;
        let window = c.context_window;
        let threshold = c.hard_tokens();
        self.session.set_compaction(c);
        if previous == model {
            return window;
        }
        let (added, removed) = self.swap_vision_tools(model);
        let vision = crate::tooling::model_has_vision(&crate::tooling::process_env, model);
        let priced = cairn_providers::cost_usd(model, &Default::default()).is_some()
            || crate::spend_env::override_cost(&Default::default()).is_some();
        let mut message = format!(
            "model: {model} (was {previous}); context window {window} tokens, compaction at \
             {threshold}"
        );
        if !added.is_empty() || !removed.is_empty() {
            message.push_str(&format!(
                "; images: {}",
                if vision {
                    "seen by the model"
                } else {
                    "described by the vision model, if one is set"
                }
            ));
        }
        if !priced {
            message.push_str("; price unknown (cost and dollar caps do not count)");
        }
        self.session.announce(Event::ModelSwitched(ModelSwitched {
            task_id: String::new(),
            model: model.to_string(),
            previous,
            context_window: window,
            threshold_tokens: threshold,
            vision,
            priced,
            tools_added: added,
            tools_removed: removed,
            message,
        }));
        window
    }

    /// Replaces the image tools by those for `model` (the user's tool settings applied);
    /// the names added and removed.
    fn swap_vision_tools(&self, model: &str) -> (Vec<String>, Vec<String>) {
        let llm = self.session.llm();
        let seen = self.session.state_dir().join(crate::tooling::SEEN_FILES);
        let mut fresh = cairn_engine::ToolRegistry::new();
        fresh.register_all(
            crate::tooling::session_tools_offline(&llm, model, Some(seen))
                .into_iter()
                .filter(|t| VISION_TOOLS.contains(&t.schema().name.as_str())),
        );
        self.tool_settings.apply(&mut fresh);
        let now = fresh.names();
        self.session.with_tools(|reg| {
            let before: Vec<String> = VISION_TOOLS
                .iter()
                .filter(|n| reg.contains(n))
                .map(|n| n.to_string())
                .collect();
            for n in VISION_TOOLS {
                reg.remove(n);
            }
            for name in &now {
                if let Some(t) = fresh.get(name) {
                    reg.register(t.handle.clone());
                }
            }
            // Their timeouts and output caps from the settings too.
            self.tool_settings.apply(reg);
            let added = now
                .iter()
                .filter(|n| !before.contains(n))
                .cloned()
                .collect();
            let removed = before.into_iter().filter(|n| !now.contains(n)).collect();
            (added, removed)
        })
    }
}
