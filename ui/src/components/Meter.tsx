import type { CompactionState } from "../bindings/CompactionState";
import type { ModelView } from "../bindings/app/ModelView";
import { plural, useT } from "../i18n";
import type { Meter as MeterState } from "../transcript";
import { formatCount } from "../format";

/** Compact number: 1234 → 1.2k, 1234567 → 1.2M. */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A dollar amount with enough digits to see small costs. */
export function dollars(x: number): string {
  if (x === 0) return "$0";
  if (x < 0.01) return `$${x.toFixed(4)}`;
  return `$${x.toFixed(2)}`;
}

/** Token and cost meter, and the context-window gauge of the session. */
export function Meter({
  meter,
  model,
  compaction = null,
}: {
  meter: MeterState;
  model: ModelView | null;
  compaction?: CompactionState | null;
}) {
  const t = useT();
  const window = model?.contextWindow ?? 0;
  const pct = window > 0 ? Math.min(100, (meter.context / window) * 100) : 0;
  const level = pct >= 80 ? "high" : pct >= 60 ? "mid" : "low";
  const priced = model?.price !== null && model?.price !== undefined;
  return (
    <div className="meter" data-testid="meter">
      <span className="meter-item" data-tip={`${formatCount(meter.input)} in · ${formatCount(meter.output)} out · ${formatCount(meter.cached)} cached · ${meter.requests} requests`}>
        <span className="meter-value" data-testid="meter-tokens">{compact(meter.input + meter.output)}</span> {t("meter.tokens")}
      </span>
      <span className="meter-item" data-tip={priced ? t("meter.cost") : `${t("meter.cost")} (${t("meter.unpriced")})`}>
        <span className="meter-value" data-testid="meter-cost">{priced || meter.cost > 0 ? dollars(meter.cost) : "—"}</span>
        {!priced && meter.requests > 0 && <span className="meter-note"> {t("meter.unpriced")}</span>}
      </span>
      <span
        className={`gauge gauge-${level}`}
        data-testid="context-gauge"
        data-pct={pct.toFixed(1)}
        data-tip={`${t("meter.context")}: ${formatCount(meter.context)} / ${formatCount(window)}${
          compaction !== null && compaction.compactions > 0
            ? ` · ${t("meter.compacted")} ${compaction.compactions}× (${plural(t, compaction.summaries, "meter.summaries")})`
            : ""
        }`}
        data-compactions={compaction?.compactions ?? 0}
      >
        <span className="gauge-label">{t("meter.context")}</span>
        <span className="gauge-track">
          <span className="gauge-fill" style={{ width: `${pct}%` }} />
        </span>
        <span className="gauge-pct">{Math.round(pct)}%</span>
      </span>
    </div>
  );
}
