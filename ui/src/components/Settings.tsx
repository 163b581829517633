import { useEffect, useMemo, useState } from "react";
import type { KeyStatus } from "../bindings/app/KeyStatus";
import type { Language } from "../bindings/app/Language";
import type { ModelView } from "../bindings/app/ModelView";
import type { PermissionRules } from "../bindings/app/PermissionRules";
import type { SettingsView } from "../bindings/app/SettingsView";
import { useT } from "../i18n";
import {
  describeError,
  permissionRules,
  removeApiKey,
  revokeCommand,
  revokeRule,
  revokeTool,
  saveSettings,
  setApiKey,
  trustMcpServer,
  connectMcpServer,
  getSettings,
} from "../ipc";
import { ConnectionResult, useConnectionTest } from "./Connection";
import { AllSettings } from "./AllSettings";
import { Extensions } from "./Extensions";
import { Vault } from "./Vault";
import { WorktreeDisk } from "./WorktreeDisk";
import { Diagnostics } from "./Diagnostics";
import { compact } from "./Meter";
import { Overlay } from "./Overlay";

type Props = {
  settings: SettingsView;
  hasSession: boolean;
  stateDir: string;
  logDir: string;
  onClose: () => void;
  onChanged: (s: SettingsView) => void;
};

const GENERIC_LEVELS = ["low", "medium", "high"];

function KeyLine({ status }: { status: KeyStatus }) {
  const t = useT();
  switch (status.state) {
    case "unchecked":
      return <div className="key-status" data-testid="key-status" data-state="unchecked">…</div>;
    case "missing":
      return <div className="key-status key-missing" data-testid="key-status" data-state="missing">{t("settings.keyMissing")}</div>;
    case "stored":
      return (
        <div className="key-status key-ok" data-testid="key-status" data-state="stored">
          {t("settings.keyStored")}: <code data-testid="key-masked">{status.masked}</code>
        </div>
      );
    case "env":
      return (
        <div className="key-status key-ok" data-testid="key-status" data-state="env">
          {t("settings.keyEnv")} <code>{status.var}</code>: <code>{status.masked}</code>
        </div>
      );
    case "not_needed":
      return <div className="key-status" data-testid="key-status" data-state="not_needed">{t("settings.keyNotNeeded")}</div>;
    case "unavailable":
      return (
        <div className="key-status key-missing" data-testid="key-status" data-state="unavailable">
          {t("settings.keyUnavailable")}: {status.reason}
        </div>
      );
  }
}

function Capabilities({ model }: { model: ModelView | null }) {
  const t = useT();
  if (model === null) return <p className="hint">{t("settings.unknownModel")}</p>;
  return (
    <div className="caps" data-testid="model-caps">
      <span className="cap">{compact(model.contextWindow)} {t("settings.context")}</span>
      {model.vision && <span className="cap">{t("settings.vision")}</span>}
      {model.reasoning && <span className="cap">{t("settings.reasoningCap")}</span>}
      {model.tools && <span className="cap">{t("settings.tools")}</span>}
      {model.price !== null && (
        <span className="cap cap-price">
          ${model.price.input} / ${model.price.output} {t("settings.price")}
        </span>
      )}
    </div>
  );
}

/** The session's allowances and the persistent rules in force, each revocable where it can be. */
export function Rules() {
  const t = useT();
  const [rules, setRules] = useState<PermissionRules | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    permissionRules().then(setRules, (e: unknown) => setError(describeError(e)));
  }, []);
  const act = (p: Promise<PermissionRules>) => p.then(setRules, (e: unknown) => setError(describeError(e)));
  if (error !== null) return <p className="form-error">{error}</p>;
  if (rules === null) return null;
  const empty = rules.tools.length + rules.commands.length + rules.directories.length + rules.persistent.length === 0;
  if (empty) return <p className="hint">{t("settings.noRules")}</p>;
  const revoke = (onClick: () => void) => (
    <button type="button" className="btn btn-small" data-testid="rule-revoke" onClick={onClick}>
      {t("settings.revoke")}
    </button>
  );
  return (
    <ul className="rules" data-testid="rules">
      {rules.tools.map((name) => (
        <li key={`t:${name}`} className="rule" data-testid="rule" data-kind="tool">
          <span className="tag">{t("settings.toolRule")}</span> <code>{name}</code>
          {revoke(() => act(revokeTool(name)))}
        </li>
      ))}
      {rules.commands.map((c) => (
        <li key={`c:${c}`} className="rule" data-testid="rule" data-kind="command">
          <span className="tag">{t("settings.commandRule")}</span> <code>{c}</code>
          {revoke(() => act(revokeCommand(c)))}
        </li>
      ))}
      {rules.directories.map((d) => (
        <li key={`d:${d.path}`} className="rule" data-testid="rule" data-kind="directory">
          <span className="tag">{t("settings.dirRule")}</span> <code>{d.path}</code> {d.writable ? "rw" : "ro"}
        </li>
      ))}
      {rules.persistent.map((r) => (
        <li
          key={`p:${r.source}:${r.project ?? ""}:${r.text}`}
          className="rule"
          data-testid="rule"
          data-kind="persistent"
          data-project={r.project === null ? undefined : "current"}
          data-tip={r.project === null ? r.source : `${r.source}\n${r.project}`}
        >
          <span className={`tag ${r.decision === "deny" ? "tag-warn" : ""}`}>{r.decision}</span> <code>{r.text}</code>
          {r.project !== null && (
            <span className="tag" data-testid="rule-project">
              {t("settings.projectRule")}
            </span>
          )}
          <span className="hint rule-source">{r.source}</span>
          {r.revocable && revoke(() => act(revokeRule(r.text, r.project)))}
        </li>
      ))}
    </ul>
  );
}

/** Settings: provider, model, endpoint, reasoning, language, API key, rules, MCP. */
export function Settings({ settings, hasSession, stateDir, logDir, onClose, onChanged }: Props) {
  const t = useT();
  const [provider, setProvider] = useState(settings.provider);
  const [model, setModel] = useState(settings.model);
  const [baseUrl, setBaseUrl] = useState(settings.baseUrl);
  const [reasoning, setReasoning] = useState(settings.reasoning);
  const [language, setLanguage] = useState<Language>(settings.language);
  const [turnLimit, setTurnLimit] = useState(settings.turnLimit);
  const [sandboxedUnasked, setSandboxedUnasked] = useState(settings.sandboxedUnasked);
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  const conn = useConnectionTest();
  const served = conn.result?.ok ? conn.result.models : [];
  const providerView = settings.providers.find((p) => p.id === provider) ?? null;
  const modelView = useMemo(
    () => settings.models.find((m) => m.id.toLowerCase() === model.trim().toLowerCase()) ?? null,
    [settings.models, model],
  );
  const levels = modelView !== null && modelView.efforts.length > 0 ? modelView.efforts : GENERIC_LEVELS;

  // The MCP servers' live state (a chat started since the settings were read): read again
  // when Settings opens.
  useEffect(() => {
    getSettings().then(onChanged, () => undefined);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const run = (p: Promise<SettingsView>, after?: () => void) => {
    setBusy(true);
    setError(null);
    p.then(
      (s) => {
        setBusy(false);
        onChanged(s);
        after?.();
      },
      (e: unknown) => {
        setBusy(false);
        setError(describeError(e));
      },
    );
  };
  const save = () =>
    run(saveSettings({ provider, model, baseUrl, reasoning, language, turnLimit, sandboxedUnasked }), () => {
      setSaved(true);
      window.setTimeout(() => setSaved(false), 1500);
    });

  return (
    <Overlay title={t("settings.title")} onClose={onClose} testId="settings">
      <section className="form-section">
        <div className="form-grid">
          <label htmlFor="provider">{t("settings.provider")}</label>
          <select id="provider" className="input" data-testid="provider" value={provider} onChange={(e) => setProvider(e.target.value)}>
            {settings.providers.map((p) => (
              <option key={p.id} value={p.id}>
                {p.label}
              </option>
            ))}
          </select>
          <label htmlFor="model">{t("settings.model")}</label>
          <div>
            <input
              id="model"
              className="input"
              list="model-list"
              data-testid="model"
              placeholder={t("settings.modelPlaceholder")}
              value={model}
              onChange={(e) => setModel(e.target.value)}
            />
            <datalist id="model-list">
              {served.map((m) => (
                <option key={`served:${m}`} value={m} />
              ))}
              {settings.models
                .filter((m) => !served.includes(m.id))
                .map((m) => (
                  <option key={m.id} value={m.id} />
                ))}
            </datalist>
            <Capabilities model={modelView} />
          </div>
          <label htmlFor="base-url">{t("settings.baseUrl")}</label>
          <div>
            <input
              id="base-url"
              className="input"
              data-testid="base-url"
              placeholder={providerView?.defaultBaseUrl ?? ""}
              value={baseUrl}
              onChange={(e) => setBaseUrl(e.target.value)}
            />
            <div className="hint">{t("settings.baseUrlHint")}</div>
          </div>
          <label htmlFor="reasoning">{t("settings.reasoning")}</label>
          <select id="reasoning" className="input" value={reasoning} onChange={(e) => setReasoning(e.target.value)}>
            <option value="">{t("settings.reasoningDefault")}</option>
            {levels.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
          <label htmlFor="language">{t("settings.language")}</label>
          <select id="language" className="input" data-testid="language" value={language} onChange={(e) => setLanguage(e.target.value as Language)}>
            <option value="en">English</option>
            <option value="zh">简体中文</option>
            <option value="zh-TW">繁體中文</option>
            <option value="ja">日本語</option>
            <option value="ko">한국어</option>
            <option value="es">Español</option>
          </select>
          <label htmlFor="turn-limit">{t("settings.turnLimit")}</label>
          <div>
            <input
              id="turn-limit"
              className="input"
              type="number"
              min={1}
              max={64}
              data-testid="turn-limit"
              value={turnLimit}
              onChange={(e) => setTurnLimit(Math.min(64, Math.max(1, Math.round(Number(e.target.value) || 1))))}
            />
            <p className="hint">{t("settings.turnLimitHint")}</p>
          </div>
          <label htmlFor="sandboxed-unasked">{t("settings.sandboxedUnasked")}</label>
          <div>
            <input
              id="sandboxed-unasked"
              type="checkbox"
              data-testid="sandboxed-unasked"
              checked={sandboxedUnasked}
              onChange={(e) => setSandboxedUnasked(e.target.checked)}
            />
            <p className="hint">{t("settings.sandboxedUnaskedHint")}</p>
          </div>
        </div>
        <ConnectionResult result={conn.result} />
        <div className="form-actions">
          <button type="button" className="btn" data-testid="settings-test" disabled={conn.testing} onClick={() => conn.test(provider, baseUrl, key)}>
            {conn.testing ? t("setup.testing") : t("setup.test")}
          </button>
          {saved && <span className="saved">{t("settings.saved")}</span>}
          <button type="button" className="btn btn-primary" data-testid="settings-save" disabled={busy} onClick={save}>
            {t("settings.save")}
          </button>
        </div>
      </section>

      {/* Every provider can take a key: required for cloud ones, optional for a gateway or a
          local server behind a proxy (vLLM, LiteLLM). */}
      {providerView !== null && (
        <section className="form-section" data-testid="api-key-section">
          <h3>
            {t("settings.apiKey")} · {providerView.label}
            {!providerView.needsKey && <span className="hint"> · {t("settings.keyOptional")}</span>}
          </h3>
          <KeyLine status={providerView.key} />
          <div className="key-row">
            <input
              type="password"
              className="input"
              autoComplete="off"
              data-testid="api-key-input"
              placeholder={t("settings.keyPlaceholder")}
              value={key}
              onChange={(e) => setKey(e.target.value)}
            />
            <button
              type="button"
              className="btn btn-primary"
              data-testid="api-key-store"
              disabled={busy || key.trim() === ""}
              onClick={() => run(setApiKey(provider, key), () => setKey(""))}
            >
              {t("settings.storeKey")}
            </button>
            {providerView.key.state === "stored" && (
              <button type="button" className="btn btn-danger" data-testid="api-key-remove" disabled={busy} onClick={() => run(removeApiKey(provider))}>
                {t("settings.removeKey")}
              </button>
            )}
          </div>
        </section>
      )}
      {error !== null && (
        <p className="form-error" role="alert" data-testid="settings-error">
          {error}
        </p>
      )}

      <section className="form-section">
        <h3>{t("settings.rules")}</h3>
        {hasSession ? <Rules /> : <p className="hint">{t("settings.rulesNoSession")}</p>}
      </section>

      <section className="form-section">
        <h3>{t("settings.mcp")}</h3>
        {settings.mcp.length === 0 ? (
          <p className="hint">{t("settings.noMcp")}</p>
        ) : (
          <ul className="rules">
            {settings.mcp.map((m) => (
              <li key={m.name} className="rule">
                <code>{m.name}</code> <span className="hint">{m.target}</span> <span className="tag">{m.status}</span>
                {m.untrusted && (
                  <button type="button" className="btn" data-testid="mcp-trust" disabled={busy} data-tip={t("settings.mcpTrustHint")} onClick={() => run(trustMcpServer(m.name))}>
                    {t("settings.mcpTrust")}
                  </button>
                )}
                {m.loginNeeded && (
                  <button type="button" className="btn" data-testid="mcp-connect" disabled={busy} data-tip={t("settings.mcpConnectHint")} onClick={() => run(connectMcpServer(m.name))}>
                    {t("settings.mcpConnect")}
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="form-section" data-testid="all-settings">
        <h3>{t("settings.all")}</h3>
        <AllSettings settings={settings} onChanged={onChanged} />
      </section>

      <section className="form-section" data-testid="vault">
        <h3>{t("vault.title")}</h3>
        <Vault />
      </section>

      <section className="form-section">
        <h3>{t("settings.worktrees")}</h3>
        <WorktreeDisk />
      </section>

      <section className="form-section">
        <h3>{t("diag.title")}</h3>
        <Diagnostics />
      </section>

      <section className="form-section">
        <h3>{t("ext.title")}</h3>
        <Extensions />
      </section>

      <section className="form-section">
        <h3>{t("settings.paths")}</h3>
        <p className="hint">
          <code>{stateDir}</code>
          <br />
          <code>{logDir}</code>
        </p>
      </section>
    </Overlay>
  );
}
