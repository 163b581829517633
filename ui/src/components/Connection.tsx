import { useState } from "react";
import type { EndpointCheck } from "../bindings/app/EndpointCheck";
import type { SettingsView } from "../bindings/app/SettingsView";
import { plural, useT } from "../i18n";
import { checkEndpoint, describeError, saveSettings, setApiKey } from "../ipc";

/** "Test connection": one cheap request to the endpoint, and what it said. */
export function useConnectionTest() {
  const [result, setResult] = useState<EndpointCheck | null>(null);
  const [testing, setTesting] = useState(false);
  const test = (provider: string, baseUrl: string, key: string) => {
    setTesting(true);
    setResult(null);
    checkEndpoint(provider, baseUrl, key.trim() === "" ? null : key).then(
      (r) => {
        setTesting(false);
        setResult(r);
      },
      (e: unknown) => {
        setTesting(false);
        setResult({ ok: false, models: [], error: describeError(e), ms: 0 });
      },
    );
  };
  return { result, testing, test, clear: () => setResult(null) };
}

/** The outcome of a connection test, in words. */
export function ConnectionResult({ result }: { result: EndpointCheck | null }) {
  const t = useT();
  if (result === null) return null;
  if (result.ok) {
    return (
      <div className="connection-result connection-ok" data-testid="connection-result" data-ok="true">
        {plural(t, result.models.length, "setup.connected")}
      </div>
    );
  }
  return (
    <div className="connection-result connection-failed" role="alert" data-testid="connection-result" data-ok="false">
      {result.error}
    </div>
  );
}

/** Whether the settings can run a turn: a model, and a key where the provider needs one. */
export function setupComplete(s: SettingsView): boolean {
  if (s.model.trim() === "") return false;
  const p = s.providers.find((x) => x.id === s.provider);
  if (p === undefined) return false;
  if (s.provider === "compatible" && s.baseUrl.trim() === "") return false;
  return !p.needsKey || (p.key.state !== "missing" && p.key.state !== "unavailable");
}

/**
 * The first-run card of the welcome screen: provider, endpoint, key, a model picked from
 * what the provider serves, "Test connection", and Save.
 */
export function SetupCard({ settings, onChanged }: { settings: SettingsView; onChanged: (s: SettingsView) => void }) {
  const t = useT();
  const [provider, setProvider] = useState(settings.provider);
  const [baseUrl, setBaseUrl] = useState(settings.baseUrl);
  const [key, setKey] = useState("");
  const [model, setModel] = useState(settings.model);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const conn = useConnectionTest();
  const view = settings.providers.find((p) => p.id === provider) ?? null;
  const served = conn.result?.ok ? conn.result.models : [];
  const save = async () => {
    setBusy(true);
    setError(null);
    try {
      if (key.trim() !== "") await setApiKey(provider, key.trim());
      const next = await saveSettings({ provider, model: model.trim(), baseUrl: baseUrl.trim(), reasoning: settings.reasoning, language: settings.language });
      setKey("");
      onChanged(next);
    } catch (e: unknown) {
      setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="setup-card" data-testid="setup-card" aria-label={t("setup.title")}>
      <h2>{t("setup.title")}</h2>
      <p className="hint">{t("setup.lead")}</p>
      <div className="form-grid">
        <label htmlFor="setup-provider">{t("settings.provider")}</label>
        <select
          id="setup-provider"
          className="input"
          data-testid="setup-provider"
          value={provider}
          onChange={(e) => {
            setProvider(e.target.value);
            conn.clear();
          }}
        >
          {settings.providers.map((p) => (
            <option key={p.id} value={p.id}>
              {p.label}
            </option>
          ))}
        </select>
        <label htmlFor="setup-base-url">{t("settings.baseUrl")}</label>
        <input
          id="setup-base-url"
          className="input"
          data-testid="setup-base-url"
          placeholder={view?.defaultBaseUrl || "http://127.0.0.1:8000/v1"}
          value={baseUrl}
          onChange={(e) => setBaseUrl(e.target.value)}
        />
        <label htmlFor="setup-key">
          {t("settings.apiKey")}
          {view !== null && !view.needsKey && <span className="hint"> ({t("settings.keyOptional")})</span>}
        </label>
        <input
          id="setup-key"
          type="password"
          autoComplete="off"
          className="input"
          data-testid="setup-key"
          placeholder={view?.key.state === "stored" || view?.key.state === "env" ? t("setup.keyKept") : t("settings.keyPlaceholder")}
          value={key}
          onChange={(e) => setKey(e.target.value)}
        />
        <label htmlFor="setup-model">{t("settings.model")}</label>
        <div>
          {served.length > 0 ? (
            <select id="setup-model" className="input" data-testid="setup-model" value={model} onChange={(e) => setModel(e.target.value)}>
              {!served.includes(model) && <option value={model}>{model === "" ? t("setup.pickModel") : model}</option>}
              {served.map((m) => (
                <option key={m} value={m} data-testid="setup-model-option">
                  {m}
                </option>
              ))}
            </select>
          ) : (
            <input
              id="setup-model"
              className="input"
              list="setup-model-list"
              data-testid="setup-model"
              placeholder={t("settings.modelPlaceholder")}
              value={model}
              onChange={(e) => setModel(e.target.value)}
            />
          )}
          <datalist id="setup-model-list">
            {settings.models.map((m) => (
              <option key={m.id} value={m.id} />
            ))}
          </datalist>
          <div className="hint">{t("setup.modelHint")}</div>
        </div>
      </div>
      <ConnectionResult result={conn.result} />
      {error !== null && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="btn" data-testid="setup-test" disabled={conn.testing} onClick={() => conn.test(provider, baseUrl, key)}>
          {conn.testing ? t("setup.testing") : t("setup.test")}
        </button>
        <button type="button" className="btn btn-primary" data-testid="setup-save" disabled={busy || model.trim() === ""} onClick={() => void save()}>
          {t("setup.save")}
        </button>
      </div>
    </section>
  );
}
