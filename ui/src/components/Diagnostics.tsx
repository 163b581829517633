import { useState } from "react";
import type { CheckRow } from "../bindings/app/CheckRow";
import type { CheckStatus } from "../bindings/app/CheckStatus";
import { plural, useT } from "../i18n";
import { describeError, runDiagnostics } from "../ipc";
import { fixWords } from "../diagnosticsFix";

type StatusKey = "diag.status.ok" | "diag.status.warning" | "diag.status.problem" | "diag.status.skipped";

/** The shown word of a row's status. */
function statusKey(status: CheckStatus): StatusKey {
  switch (status) {
    case "ok":
      return "diag.status.ok";
    case "warning":
      return "diag.status.warning";
    case "problem":
      return "diag.status.problem";
    case "skipped":
      return "diag.status.skipped";
  }
}

/** What to do about one row, in the app's words. */
function FixLine({ fix }: { fix: ReturnType<typeof fixWords> }) {
  return (
    <div className="hint diag-fix" data-testid="diagnostics-fix">
      → {fix.text}
      {fix.steps.length > 0 && <pre className="diag-steps">{fix.steps.join("\n")}</pre>}
    </div>
  );
}

/**
 * Settings → Diagnostics: runs the checks of `cairn doctor` on demand (they start servers and
 * ask endpoints, so never on their own) and shows each typed row: its status, what was found
 * and what to do.
 */
export function Diagnostics() {
  const t = useT();
  const [rows, setRows] = useState<CheckRow[] | null>(null);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = (offline: boolean) => {
    setRunning(true);
    setError(null);
    runDiagnostics(offline).then(
      (r) => {
        setRows(r);
        setRunning(false);
      },
      (e: unknown) => {
        setError(describeError(e));
        setRunning(false);
      },
    );
  };
  const problems = rows?.filter((r) => r.status === "problem").length ?? 0;
  return (
    <div data-testid="diagnostics">
      <p className="hint">{t("diag.lead")}</p>
      <div className="form-row">
        <button type="button" className="btn" data-testid="diagnostics-run" disabled={running} onClick={() => run(false)}>
          {running ? t("diag.running") : t("diag.run")}
        </button>
        <button type="button" className="btn" disabled={running} onClick={() => run(true)}>
          {t("diag.runOffline")}
        </button>
      </div>
      {error !== null && <p className="form-error">{error}</p>}
      {rows !== null && (
        <>
          <p className="hint" data-testid="diagnostics-summary">
            {problems === 0 ? t("diag.allOk") : plural(t, problems, "diag.problems")}
          </p>
          <ul className="rules">
            {rows.map((r) => (
              <li
                key={`${r.group}/${r.check}`}
                className="rule diag-row"
                data-testid="diagnostics-row"
                data-group={r.group}
                data-status={r.status}
              >
                <strong>{t(statusKey(r.status))}</strong> <code>{r.check}</code> <span>{r.detail}</span>
                {r.fix !== undefined && <FixLine fix={fixWords(t, r.fix)} />}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
