import { useEffect, useState } from "react";
import type { BudgetView } from "../bindings/app/BudgetView";
import { plural, useT } from "../i18n";
import * as ipc from "../ipc";

/** Twice the cap, rounded up to a readable amount. */
export function suggestedCap(view: BudgetView): number {
  const limit = view.limit ?? 0;
  if (view.unit === "tokens") return Math.max(1000, Math.ceil((limit * 2) / 1000) * 1000);
  return Math.max(0.01, Math.ceil(limit * 2 * 100) / 100);
}

/**
 * The spending cap was reached: the cap and what was spent, a field for a new cap (twice the
 * old one by default) and "Raise and continue", which sets it and goes on with the turn.
 */
export function RaiseBudget({ onRaised }: { onRaised: () => void }) {
  const t = useT();
  const [view, setView] = useState<BudgetView | null>(null);
  const [value, setValue] = useState("");
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    ipc.sessionBudget().then(
      (v) => {
        if (!live) return;
        setView(v);
        setValue(String(suggestedCap(v)));
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, []);
  if (view === null || view.unit === null) return null;
  const tokens = view.unit === "tokens";
  const spent = tokens ? `${view.spentTokens ?? 0} ${t("meter.tokens")}` : `$${(view.spentUsd ?? 0).toFixed(4)}`;
  const raise = () => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0 || n <= (view.limit ?? 0)) {
      setError(t("budget.higher"));
      return;
    }
    const limit = tokens ? { unit: "tokens" as const, limit: Math.round(n) } : { unit: "usd" as const, limit: n };
    ipc.setBudget(limit).then(
      () => onRaised(),
      (e: unknown) => setError(String((e as { message?: string }).message ?? e)),
    );
  };
  return (
    <form
      className="budget-raise"
      data-testid="budget-raise"
      onSubmit={(e) => {
        e.preventDefault();
        raise();
      }}
    >
      <span>
        {t("budget.spent")} {spent}
        {view.limit !== null && ` ${t("budget.of")} ${tokens ? `${view.limit} ${t("meter.tokens")}` : `$${view.limit.toFixed(4)}`}`}
        {view.sessions > 1 && <span data-testid="budget-shared"> {plural(t, view.sessions, "budget.shared")}</span>}
      </span>
      <label>
        {t("budget.newCap")} {tokens ? "" : "$"}
        <input
          type="number"
          min={0}
          step={tokens ? 1000 : 0.01}
          value={value}
          data-testid="budget-input"
          onChange={(e) => {
            setValue(e.target.value);
            setError(null);
          }}
        />
        {tokens ? ` ${t("meter.tokens")}` : ""}
      </label>
      <button type="submit" className="btn btn-small notice-action" data-testid="budget-raise-go">
        {t("budget.raise")}
      </button>
      {error !== null && <span className="budget-error">{error}</span>}
    </form>
  );
}
