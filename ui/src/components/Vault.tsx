import { useEffect, useState } from "react";
import type { VaultView } from "../bindings/app/VaultView";
import { useT } from "../i18n";
import { describeError, vaultList, vaultRemove, vaultSet } from "../ipc";

/** The vault: variables for the agent's commands, each for some roles (values go to the OS
 * keyring, or sealed in the config folder without one; they never come back). */
export function Vault() {
  const t = useT();
  const [view, setView] = useState<VaultView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [roles, setRoles] = useState("");
  const run = (p: Promise<VaultView>, after?: () => void) => {
    setBusy(true);
    setError(null);
    p.then(
      (v) => {
        setBusy(false);
        setView(v);
        after?.();
      },
      (e: unknown) => {
        setBusy(false);
        setError(describeError(e));
      },
    );
  };
  useEffect(() => {
    vaultList().then(setView, (e: unknown) => setError(describeError(e)));
  }, []);
  return (
    <>
      <p className="hint">{t("vault.hint")}</p>
      {view?.notice && <p className="hint" data-testid="vault-notice">{view.notice}</p>}
      <ul className="rules" data-testid="vault-entries">
        {(view?.entries ?? []).map((e) => (
          <li key={e.name} className="rule">
            <code>{e.name}</code> <span className="hint">{e.roles.join(", ")}</span> <span className="tag">{e.store === "keyring" ? t("settings.fromKeyring") : t("vault.sealed")}</span>
            <button type="button" className="btn btn-danger" disabled={busy} onClick={() => run(vaultRemove(e.name))}>
              {t("settings.removeKey")}
            </button>
          </li>
        ))}
      </ul>
      <div className="key-row">
        <input className="input" aria-label={t("vault.name")} placeholder="DEPLOY_TOKEN" value={name} onChange={(e) => setName(e.target.value)} />
        <input className="input" type="password" autoComplete="off" aria-label={t("vault.value")} placeholder={t("vault.value")} value={value} onChange={(e) => setValue(e.target.value)} />
        <input className="input" aria-label={t("vault.roles")} placeholder={t("vault.rolesPlaceholder")} value={roles} onChange={(e) => setRoles(e.target.value)} />
        <button
          type="button"
          className="btn btn-primary"
          disabled={busy || name.trim() === "" || value === ""}
          onClick={() =>
            run(
              vaultSet(
                name.trim(),
                value,
                roles.split(",").map((r) => r.trim()).filter((r) => r !== ""),
              ),
              () => {
                setName("");
                setValue("");
                setRoles("");
              },
            )
          }
        >
          {t("settings.worktreeBudgetSet")}
        </button>
      </div>
      {error !== null && (
        <p className="form-error" role="alert" data-testid="vault-error">
          {error}
        </p>
      )}
    </>
  );
}
