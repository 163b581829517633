// ui/src/ipc.ts against the app's command handlers: every command the page invokes exists
// (src-tauri/command_names.rs, the list the handler, permissions and capability come from)
// and is called with exactly the argument keys its Rust function takes (Tauri's camelCase
// of the parameter names; an `Option` parameter may be left out). Read from the sources, so
// a renamed command or parameter fails here instead of at run time.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ui = join(__dirname, "..");
const repo = join(ui, "..");
const read = (path: string) => readFileSync(path, "utf8");

/** The command names of src-tauri/command_names.rs. */
export function commandNames(source: string): string[] {
  const list = /COMMANDS: &\[&str\] = &\[([\s\S]*?)\];/.exec(source);
  if (list === null) throw new Error("no COMMANDS list");
  return [...(list[1] ?? "").matchAll(/"([a-z_]+)"/g)].map((m) => m[1] ?? "");
}

/** Each `invoke<…>("name", { keys })` of ipc.ts: the command and its argument keys. */
export function invocations(source: string): { name: string; keys: string[] }[] {
  const out: { name: string; keys: string[] }[] = [];
  for (const m of source.matchAll(/invoke<[^(]*?>\(\s*"([a-z_]+)"\s*(?:,\s*\{([^}]*)\})?\s*\)/g)) {
    const keys = (m[2] ?? "")
      .split(",")
      .map((part) => part.split(":")[0]?.trim() ?? "")
      .filter((k) => k !== "");
    out.push({ name: m[1] ?? "", keys });
  }
  return out;
}

/** The parameters of a Rust function's list, split at top-level commas. */
function splitParams(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = "";
  for (const ch of list) {
    if (ch === "<" || ch === "(" || ch === "[") depth++;
    else if (ch === ">" || ch === ")" || ch === "]") depth--;
    if (ch === "," && depth === 0) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur.trim() !== "") out.push(cur);
  return out.map((p) => p.trim()).filter((p) => p !== "");
}

/** Types Tauri fills in itself (not sent by the page). */
const INJECTED = /^(?:tauri::)?(?:Window|WebviewWindow|Webview|AppHandle|State)\b/;

const camel = (s: string) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/** A `#[tauri::command]` function's page-sent parameters: camelCase name and whether optional. */
export function commandParams(source: string, name: string): { key: string; optional: boolean }[] | null {
  const at = new RegExp(`#\\[tauri::command\\]\\s*pub(?:\\(crate\\))? (?:async )?fn ${name}\\b(?:<[^>]*>)?\\s*\\(`).exec(source);
  if (at === null) return null;
  let depth = 1;
  let i = at.index + at[0].length;
  const start = i;
  for (; i < source.length && depth > 0; i++) {
    if (source[i] === "(") depth++;
    else if (source[i] === ")") depth--;
  }
  return splitParams(source.slice(start, i - 1))
    .map((p) => {
      const colon = p.indexOf(":");
      return { name: p.slice(0, colon).trim().replace(/^mut /, ""), type: p.slice(colon + 1).trim() };
    })
    .filter((p) => !INJECTED.test(p.type))
    .map((p) => ({ key: camel(p.name), optional: p.type.startsWith("Option<") }));
}

const handlers = readdirSync(join(repo, "src-tauri/commands"))
  .filter((f) => f.endsWith(".rs"))
  .map((f) => read(join(repo, "src-tauri/commands", f)))
  .join("\n");
const names = commandNames(read(join(repo, "src-tauri/command_names.rs")));
const calls = invocations(read(join(ui, "src/ipc.ts")));

describe("ipc.ts against the command handlers", () => {
  it("reads the sources", () => {
    expect(names.length).toBeGreaterThan(50);
    expect(calls.length).toBeGreaterThan(50);
    expect(commandParams("#[tauri::command]\npub async fn x<R: Runtime>(window: Window<R>, state: State<'_, AppState>, req_id: String, on_event: Channel<Vec<u8>>, limit: Option<usize>) -> R {}", "x")).toEqual([
      { key: "reqId", optional: false },
      { key: "onEvent", optional: false },
      { key: "limit", optional: true },
    ]);
  });

  it("invokes only listed commands, and every listed command has a handler", () => {
    expect(calls.map((c) => c.name).filter((n) => !names.includes(n))).toEqual([]);
    expect(names.filter((n) => commandParams(handlers, n) === null)).toEqual([]);
  });

  it("calls each command with exactly the keys its function takes", () => {
    const wrong: string[] = [];
    for (const call of calls) {
      const params = commandParams(handlers, call.name);
      if (params === null) continue;
      const extra = call.keys.filter((k) => !params.some((p) => p.key === k));
      const missing = params.filter((p) => !p.optional && !call.keys.includes(p.key)).map((p) => p.key);
      if (extra.length > 0 || missing.length > 0) wrong.push(`${call.name}: extra [${extra.join(", ")}], missing [${missing.join(", ")}]`);
    }
    expect(wrong).toEqual([]);
  });

  it("catches a renamed argument", () => {
    const renamed = invocations('invoke<void>("rename_session", { id, title })');
    const params = commandParams(handlers, "rename_session") ?? [];
    expect(renamed[0]?.keys.filter((k) => !params.some((p) => p.key === k))).toEqual(["title"]);
  });
});
