// An MCP server's request for information during one of its tool calls: a form built from
// the requested schema (defaults filled in, choices as selects or checkboxes, required fields
// marked, a warning on secret-like fields), or a page whose origin is shown in full and which
// opens only when the user agrees. Server text is rendered as plain text, never as markup.
import { memo, useMemo, useState } from "react";
import type { ElicitationAnswer } from "../bindings/ElicitationAnswer";
import { useT } from "../i18n";
import type { Item } from "../transcript";

type ElicitItem = Extract<Item, { kind: "elicitation" }>;

/** Answers an elicitation; `openUrl` is the page to open once accepted (URL mode). */
export type ElicitAnswerer = (item: { id: string; requestId: string }, answer: ElicitationAnswer, openUrl: string | null) => void;

/** One field of the requested schema. */
export type Field = {
  name: string;
  label: string;
  description: string | null;
  kind: "string" | "number" | "integer" | "boolean" | "choice" | "multi";
  format: string | null;
  required: boolean;
  choices: { value: string; label: string }[];
  initial: string | boolean | string[];
};

const obj = (v: unknown): Record<string, unknown> | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

function choicesOf(p: Record<string, unknown>): { value: string; label: string }[] {
  const values = Array.isArray(p.enum) ? p.enum : null;
  if (values !== null) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    return values.filter((v): v is string => typeof v === "string").map((v, i) => ({ value: v, label: str(names[i]) ?? v }));
  }
  const list = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : [];
  return list.flatMap((c) => {
    const o = obj(c);
    const v = o === null ? null : str(o.const);
    return v === null || o === null ? [] : [{ value: v, label: str(o.title) ?? v }];
  });
}

/** The fields of a requested schema (flat properties, as the specification allows). */
export function fieldsOf(schema: Record<string, unknown> | null): Field[] {
  const props = obj(schema?.properties);
  if (props === null) return [];
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === "string") : [];
  return Object.entries(props).map(([name, raw]) => {
    const p = obj(raw) ?? {};
    const type = str(p.type) ?? "string";
    const items = obj(p.items);
    const choices = choicesOf(type === "array" && items !== null ? items : p);
    const kind: Field["kind"] =
      type === "array" ? "multi" : choices.length > 0 ? "choice" : type === "boolean" ? "boolean" : type === "integer" ? "integer" : type === "number" ? "number" : "string";
    const d = p.default;
    const initial =
      kind === "boolean"
        ? d === true
        : kind === "multi"
          ? Array.isArray(d)
            ? d.filter((x): x is string => typeof x === "string")
            : []
          : d === undefined || d === null
            ? ""
            : String(d);
    return {
      name,
      label: str(p.title) ?? name,
      description: str(p.description),
      kind,
      format: str(p.format),
      required: required.includes(name),
      choices,
      initial,
    };
  });
}

/** Whether a field seems to ask for a secret. */
export function secretLike(f: Field): boolean {
  const n = f.name.toLowerCase();
  return f.format === "password" || ["password", "passwd", "secret", "token", "apikey", "api_key", "pin"].some((w) => n.includes(w));
}

/** The form's values as the answer's content: empty fields left out, numbers as numbers. */
export function contentOf(fields: Field[], values: Record<string, string | boolean | string[]>): { content: Record<string, unknown>; missing: string[] } {
  const content: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const f of fields) {
    const v = values[f.name] ?? f.initial;
    if (f.kind === "boolean") {
      content[f.name] = v === true;
    } else if (f.kind === "multi") {
      if (Array.isArray(v) && v.length > 0) content[f.name] = v;
      else if (f.required) missing.push(f.label);
    } else if (typeof v === "string" && v.trim() !== "") {
      const n = Number(v);
      content[f.name] = (f.kind === "number" || f.kind === "integer") && !Number.isNaN(n) ? n : v;
    } else if (f.required) {
      missing.push(f.label);
    }
  }
  return { content, missing };
}

function originOf(url: string | null): string {
  if (url === null) return "";
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

export const ElicitationCard = memo(function ElicitationCard({ item, answer }: { item: ElicitItem; answer: ElicitAnswerer }) {
  const t = useT();
  const fields = useMemo(() => fieldsOf(item.schema), [item.schema]);
  const [values, setValues] = useState<Record<string, string | boolean | string[]>>({});
  const pending = item.state === "pending";
  const set = (name: string, v: string | boolean | string[]) => setValues((cur) => ({ ...cur, [name]: v }));
  const { content, missing } = contentOf(fields, values);
  const decline = () => answer(item, { action: "decline", reason: "the user declined" }, null);
  const cancel = () => answer(item, { action: "cancel" }, null);
  const title = (item.mode === "url" ? t("elicit.page") : t("elicit.title")).replace("{server}", item.server);
  return (
    <article className="ask-card elicit-card" data-testid="elicitation" data-state={item.state}>
      <header className="ask-head">
        {title} {item.state !== "pending" && <span className={`ask-state ask-${item.state}`}>{item.state === "expired" ? t("expired") : t("answered")}</span>}
      </header>
      <div className="ask-text">{item.message}</div>
      {item.mode === "url" ? (
        <div className="elicit-url">
          <div>
            {t("elicit.origin")} <strong data-testid="elicit-origin">{originOf(item.url)}</strong>
          </div>
          <code className="elicit-full-url">{item.url}</code>
        </div>
      ) : (
        <div className="elicit-fields">
          {fields.map((f) => {
            const v = values[f.name] ?? f.initial;
            const id = `elicit-${item.id}-${f.name}`;
            return (
              <div className="elicit-field" key={f.name} data-testid="elicit-field" data-name={f.name}>
                <label htmlFor={id} className="elicit-label">
                  {f.label}
                  {f.required && <span className="tag">{t("elicit.required")}</span>}
                </label>
                {f.description !== null && <div className="elicit-desc">{f.description}</div>}
                {secretLike(f) && <div className="elicit-warn">{t("elicit.secret")}</div>}
                {f.kind === "boolean" ? (
                  <input id={id} type="checkbox" disabled={!pending} checked={v === true} onChange={(e) => set(f.name, e.target.checked)} />
                ) : f.kind === "choice" ? (
                  <select id={id} className="input" disabled={!pending} value={typeof v === "string" ? v : ""} onChange={(e) => set(f.name, e.target.value)}>
                    <option value="">—</option>
                    {f.choices.map((c) => (
                      <option key={c.value} value={c.value}>
                        {c.label}
                      </option>
                    ))}
                  </select>
                ) : f.kind === "multi" ? (
                  <div className="elicit-multi">
                    {f.choices.map((c) => {
                      const picked = Array.isArray(v) && v.includes(c.value);
                      return (
                        <label key={c.value}>
                          <input
                            type="checkbox"
                            disabled={!pending}
                            checked={picked}
                            onChange={() => set(f.name, picked ? (v as string[]).filter((x) => x !== c.value) : [...(Array.isArray(v) ? v : []), c.value])}
                          />{" "}
                          {c.label}
                        </label>
                      );
                    })}
                  </div>
                ) : (
                  <input
                    id={id}
                    className="input"
                    disabled={!pending}
                    type={f.kind === "number" || f.kind === "integer" ? "number" : f.format === "date" ? "date" : f.format === "email" ? "email" : "text"}
                    step={f.kind === "integer" ? 1 : "any"}
                    value={typeof v === "string" ? v : ""}
                    onChange={(e) => set(f.name, e.target.value)}
                  />
                )}
              </div>
            );
          })}
          <div className="elicit-desc">{t("elicit.note")}</div>
        </div>
      )}
      {pending && (
        <div className="ask-row">
          {item.mode === "url" ? (
            <button type="button" className="btn btn-primary" data-testid="elicit-accept" onClick={() => answer(item, { action: "accept", content: {} }, item.url)}>
              {t("elicit.open")}
            </button>
          ) : (
            <button
              type="button"
              className="btn btn-primary"
              data-testid="elicit-accept"
              disabled={missing.length > 0}
              data-tip={missing.length > 0 ? missing.join(", ") : undefined}
              onClick={() => answer(item, { action: "accept", content }, null)}
            >
              {t("elicit.accept")}
            </button>
          )}
          <button type="button" className="btn" data-testid="elicit-decline" onClick={decline}>
            {t("elicit.decline")}
          </button>
          <button type="button" className="btn" data-testid="elicit-cancel" onClick={cancel}>
            {t("elicit.cancel")}
          </button>
        </div>
      )}
    </article>
  );
});
