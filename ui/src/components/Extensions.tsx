import { useEffect, useState } from "react";
import type { ExtensionsView } from "../bindings/app/ExtensionsView";
import { useT } from "../i18n";
import { describeError, enableClaudeUserFiles, getExtensions, trustProjectHooks } from "../ipc";
import { SOURCE_KEY } from "../slash";

/**
 * Settings' list of what a session of this workspace gets from hooks (and whether each runs),
 * Agent Skills and slash commands, each with where it comes from; the project's hooks are
 * trusted here. Definitions are the repository's text: rendered as text nodes only.
 */
export function Extensions() {
  const t = useT();
  const [view, setView] = useState<ExtensionsView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    getExtensions().then(setView, (e: unknown) => setError(describeError(e)));
  }, []);
  if (error !== null && view === null) return <p className="hint">{error}</p>;
  if (view === null) return null;
  const held = view.hooks.some((h) => !h.trusted) || view.heldCommands.length > 0;
  const act = (call: () => Promise<ExtensionsView>) => () => {
    setBusy(true);
    call().then(
      (v) => {
        setBusy(false);
        setView(v);
        setError(null);
      },
      (e: unknown) => {
        setBusy(false);
        setError(describeError(e));
      },
    );
  };
  const trust = act(trustProjectHooks);
  const optIn = act(enableClaudeUserFiles);
  return (
    <div data-testid="extensions">
      <h4>{t("ext.hooks")}</h4>
      {view.hooks.length === 0 ? (
        <p className="hint">
          {t("ext.noHooks")} <code>{view.projectHooksFile}</code>
        </p>
      ) : (
        <ul className="rules" data-testid="ext-hooks">
          {view.hooks.map((h, i) => (
            <li key={`${h.file}:${i}`} className="rule" data-testid="ext-hook" data-trusted={h.trusted} data-tip={h.file}>
              <span className="tag">{h.event}</span>
              {h.matcher !== "" && <code>{h.matcher}</code>}
              <code className="ext-command">{h.command}</code>
              <span className="hint">{t(SOURCE_KEY[h.source])}</span>
              <span className={`tag ${h.trusted ? "" : "tag-warn"}`}>{t(h.trusted ? "ext.runs" : "ext.notTrusted")}</span>
            </li>
          ))}
        </ul>
      )}
      {view.heldCommands.length > 0 && (
        <div className="hint" data-testid="ext-held-commands">
          {t("ext.heldCommands")}
          <ul>
            {view.heldCommands.map((f) => (
              <li key={f}>
                <code>{f}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      {held && (
        <p className="hint">
          {t("ext.trustHint")}{" "}
          <button type="button" className="btn" data-testid="hooks-trust" disabled={busy} onClick={trust}>
            {t("ext.trustHooks")}
          </button>
        </p>
      )}
      {error !== null && <p className="form-error">{error}</p>}
      {view.warnings.map((w) => (
        <p key={w} className="form-error">
          {w}
        </p>
      ))}
      {view.claudeUserFiles.length > 0 && (
        <div data-testid="ext-claude-offer">
          <h4>{t("ext.claudeTitle")}</h4>
          <p className="hint">{t("ext.claudeHint")}</p>
          <ul className="rules">
            {view.claudeUserFiles.map((f) => (
              <li key={f} className="rule">
                <code>{f}</code>
              </li>
            ))}
          </ul>
          <button type="button" className="btn" data-testid="ext-claude-use" disabled={busy} onClick={optIn}>
            {t("ext.claudeUse")}
          </button>
        </div>
      )}
      <h4>{t("ext.skills")}</h4>
      {view.skills.length === 0 ? (
        <p className="hint">{t("ext.noSkills")}</p>
      ) : (
        <ul className="rules" data-testid="ext-skills">
          {view.skills.map((s) => (
            <li key={s.dir} className="rule" data-testid="ext-skill" data-tip={s.dir}>
              <code>{s.name}</code>
              <span className="hint">{t(SOURCE_KEY[s.source])}</span>
              {s.userOnly && <span className="tag">{t("ext.userOnly")}</span>}
              <span className="hint ext-desc">{s.description}</span>
            </li>
          ))}
        </ul>
      )}
      <h4>{t("ext.commands")}</h4>
      <ul className="rules" data-testid="ext-commands">
        {view.commands.map((c) => (
          <li key={`${c.source}:${c.name}`} className="rule" data-testid="ext-command" data-tip={c.file}>
            <code>/{c.name}</code>
            <span className="hint">{t(SOURCE_KEY[c.source])}</span>
            <span className="hint ext-desc">{c.description}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
