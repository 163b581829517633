import { useState } from "react";
import type { SettingOption } from "../bindings/app/SettingOption";
import type { SettingsView } from "../bindings/app/SettingsView";
import { useT } from "../i18n";
import { describeError, setSetting, unsetSetting } from "../ipc";

type Props = {
  settings: SettingsView;
  onChanged: (s: SettingsView) => void;
};

/** One setting's row: its value in effect, where it came from, and an editor. */
function OptionRow({ option, sessionProvider, busy, onSet, onUnset }: { option: SettingOption; sessionProvider: string; busy: boolean; onSet: (v: string) => void; onUnset: () => void }) {
  const t = useT();
  const secret = option.kind === "secret";
  const [draft, setDraft] = useState(secret ? "" : (option.value ?? ""));
  const fromFile = option.source === "file" || option.source === "keyring";
  const source =
    option.source === "env" ? `${t("settings.fromEnv")} ${option.env ?? ""}` : option.source === "default" ? `${t("settings.fromDefault")}: ${option.default}` : option.source === "keyring" ? t("settings.fromKeyring") : t("settings.fromFile");
  const editor =
    option.kind === "choice" || option.kind === "bool" ? (
      <select className="input" aria-label={option.key} value={draft} onChange={(e) => setDraft(e.target.value)}>
        <option value="">—</option>
        {(option.kind === "bool" ? ["true", "false"] : option.choices).map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
    ) : (
      <input
        className="input"
        aria-label={option.key}
        type={secret ? "password" : option.kind === "number" ? "number" : "text"}
        autoComplete="off"
        placeholder={secret ? (option.value ?? "") : option.default}
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
      />
    );
  return (
    <li className="rule" data-testid={`setting-${option.key}`}>
      <div>
        <code>{option.key}</code> <span className="tag">{source}</span>
        {option.key === "vision.provider" && option.value !== null && option.value !== sessionProvider && (
          <span className="tag" data-testid="vision-provider-differs">
            {t("settings.visionOtherProvider")} ({sessionProvider})
          </span>
        )}
        <div className="hint">{option.about}</div>
      </div>
      <div className="key-row">
        {editor}
        <button type="button" className="btn" disabled={busy || draft.trim() === ""} onClick={() => onSet(draft)}>
          {t("settings.worktreeBudgetSet")}
        </button>
        {fromFile && (
          <button type="button" className="btn btn-danger" disabled={busy} onClick={onUnset}>
            {t("settings.removeKey")}
          </button>
        )}
      </div>
    </li>
  );
}

/** Every user setting (the keys of `cairn config list`), each with its source; edits write the
 * same `config.toml` (secrets go to the OS keyring). */
export function AllSettings({ settings, onChanged }: Props) {
  const t = useT();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [newKey, setNewKey] = useState("");
  const [newValue, setNewValue] = useState("");
  const run = (p: Promise<SettingsView>) => {
    setBusy(true);
    setError(null);
    p.then(
      (s) => {
        setBusy(false);
        onChanged(s);
      },
      (e: unknown) => {
        setBusy(false);
        setError(describeError(e));
      },
    );
  };
  return (
    <>
      <p className="hint">
        {t("settings.allHint")} <code>{settings.configFile}</code>
      </p>
      <ul className="rules">
        {settings.options.map((o) => (
          <OptionRow key={`${o.key}:${o.value ?? ""}:${o.source}`} option={o} sessionProvider={settings.provider} busy={busy} onSet={(v) => run(setSetting(o.key, v))} onUnset={() => run(unsetSetting(o.key))} />
        ))}
      </ul>
      <div className="key-row">
        <input className="input" aria-label={t("settings.newKey")} placeholder="tools.run_shell.timeout_ms" value={newKey} onChange={(e) => setNewKey(e.target.value)} />
        <input className="input" aria-label={t("settings.newValue")} value={newValue} onChange={(e) => setNewValue(e.target.value)} />
        <button
          type="button"
          className="btn"
          disabled={busy || newKey.trim() === "" || newValue.trim() === ""}
          onClick={() => {
            run(setSetting(newKey.trim(), newValue));
            setNewKey("");
            setNewValue("");
          }}
        >
          {t("settings.worktreeBudgetSet")}
        </button>
      </div>
      {error !== null && (
        <p className="form-error" role="alert" data-testid="all-settings-error">
          {error}
        </p>
      )}
    </>
  );
}
