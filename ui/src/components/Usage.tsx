import { useEffect, useState } from "react";
import type { UsageReport } from "../bindings/app/UsageReport";
import type { UsageRow } from "../bindings/app/UsageRow";
import { plural, useT } from "../i18n";
import { describeError, usageReport } from "../ipc";
import { compact, dollars } from "./Meter";
import { Overlay } from "./Overlay";
import { formatDate } from "../format";

function Rows({ rows, first }: { rows: UsageRow[]; first: string }) {
  const t = useT();
  return (
    <table className="table">
      <thead>
        <tr>
          <th>{first}</th>
          <th>{t("usage.requests")}</th>
          <th>{t("usage.failed")}</th>
          <th>{t("usage.input")}</th>
          <th>{t("usage.cached")}</th>
          <th>{t("usage.output")}</th>
          <th>{t("usage.cost")}</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key} data-testid="usage-row">
            <td className="cell-label" data-tip={r.key}>{r.label}</td>
            <td>{r.requests}</td>
            <td className={r.failed > 0 ? "cell-warn" : ""}>{r.failed}</td>
            <td>{compact(r.inputTokens)}</td>
            <td>{compact(r.cachedTokens)}</td>
            <td>{compact(r.outputTokens)}</td>
            <td>
              {dollars(r.costUsd)}
              {r.unpriced > 0 && (
                <span className="hint" data-testid="usage-unpriced" data-tip={t("usage.unpricedHint")}>
                  {" "}
                  {t("usage.unpriced").replace("{n}", String(r.unpriced))}
                </span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Requests, tokens and cost per session and day, and why requests failed or were retried. */
export function Usage({ onClose, lang }: { onClose: () => void; lang: string }) {
  const t = useT();
  const [report, setReport] = useState<UsageReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    usageReport().then(setReport, (e: unknown) => setError(describeError(e)));
  }, []);
  return (
    <Overlay title={t("usage.title")} onClose={onClose} testId="usage" wide>
      {error !== null && <p className="form-error">{error}</p>}
      {report !== null && report.total.requests === 0 && <p className="hint">{t("usage.empty")}</p>}
      {report !== null && report.total.requests > 0 && (
        <>
          <div className="usage-totals" data-testid="usage-total">
            <div><span className="big">{report.total.requests}</span> {t("usage.requests")}</div>
            <div><span className="big">{compact(report.total.inputTokens + report.total.outputTokens)}</span> tokens</div>
            <div><span className="big">{dollars(report.total.costUsd)}</span> {t("usage.cost")}</div>
            <div><span className="big">{report.total.failed}</span> {t("usage.failed")}</div>
          </div>
          {report.total.unpriced > 0 && (
            <p className="hint" data-testid="usage-unpriced-note">
              {plural(t, report.total.unpriced, "usage.unpricedNote")}
            </p>
          )}
          <h3>{t("usage.bySession")}</h3>
          <Rows rows={report.sessions} first={t("usage.session")} />
          <h3>{t("usage.byDay")}</h3>
          <Rows rows={report.days} first={t("usage.when")} />
          <h3>{t("usage.failures")}</h3>
          {report.failures.length === 0 ? (
            <p className="hint">{t("usage.noFailures")}</p>
          ) : (
            <table className="table">
              <thead>
                <tr>
                  <th>{t("usage.when")}</th>
                  <th>{t("usage.session")}</th>
                  <th>{t("usage.model")}</th>
                  <th>{t("usage.kind")}</th>
                  <th>{t("usage.reason")}</th>
                </tr>
              </thead>
              <tbody>
                {report.failures.map((f, i) => (
                  <tr key={i} data-testid="usage-failure">
                    <td>{f.at === "" ? "—" : formatDate(new Date(f.at), lang, true)}</td>
                    <td className="cell-label">{f.sessionName}</td>
                    <td>{f.model}</td>
                    <td>
                      <span className={`tag ${f.kind === "error" ? "tag-warn" : ""}`}>{f.kind}</span> {f.attempt ?? ""}
                    </td>
                    <td className="cell-reason">{f.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </Overlay>
  );
}
