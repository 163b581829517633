// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AlwaysAllow } from "./bindings/AlwaysAllow";
import type { PermissionRules } from "./bindings/app/PermissionRules";
import type { Item } from "./transcript";

const rules: PermissionRules = {
  mode: "interactive",
  tools: [],
  commands: [],
  directories: [],
  persistent: [
    { decision: "deny", text: "run_shell(curl:*)", source: "/home/u/.config/cairn/permissions.toml", revocable: true, project: null },
    { decision: "allow", text: "run_shell(touch:*)", source: "/home/u/.config/cairn/permissions.toml", revocable: true, project: "/src/app" },
  ],
};
const revokeRule = vi.fn((_text: string, _project: string | null = null) => Promise.resolve(rules));
vi.mock("./ipc", async (original) => ({
  ...(await original<typeof import("./ipc")>()),
  permissionRules: () => Promise.resolve(rules),
  revokeRule: (text: string, project: string | null = null) => revokeRule(text, project),
}));

const { ToolCard } = await import("./components/ToolCard");
const { Rules } = await import("./components/Settings");

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let root: Root;
let host: HTMLDivElement;

beforeEach(() => {
  host = document.createElement("div");
  document.body.appendChild(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  document.body.innerHTML = "";
  revokeRule.mockClear();
});

const tool = (always: AlwaysAllow | null): Extract<Item, { kind: "tool" }> => ({
  kind: "tool",
  id: "call_1",
  subject: "touch a.txt",
  name: "run_shell",
  toolKind: "command",
  args: { command: "touch a.txt" },
  state: "awaiting",
  startedAt: null,
  durationMs: null,
  output: "",
  preview: null,
  truncated: null,
  attachments: [],
  reason: null,
  approval: { reason: "runs a command", category: "shell", always, state: "pending" },
});
const button = (id: string) => host.querySelector<HTMLButtonElement>(`[data-testid=${id}]`);

describe("Always allow in this project", () => {
  it("the approval card offers it beside the session allowance and answers through it", () => {
    const onAnswer = vi.fn();
    const onAllowInProject = vi.fn();
    act(() => root.render(<ToolCard item={tool({ kind: "command", program: "touch" })} onAnswer={onAnswer} onAllowInProject={onAllowInProject} native={false} />));
    expect(button("approve-always")?.textContent).toBe("Always allow `touch`");
    expect(button("approve-project")?.textContent).toBe("Always allow `touch` in this project");
    act(() => button("approve-project")?.click());
    expect(onAllowInProject).toHaveBeenCalledWith("call_1");
    expect(onAnswer).not.toHaveBeenCalled();
  });

  it("is not offered without an allowance, nor where the face cannot keep one", () => {
    act(() => root.render(<ToolCard item={tool(null)} onAnswer={vi.fn()} onAllowInProject={vi.fn()} native={false} />));
    expect(button("approve-project")).toBeNull();
    act(() => root.render(<ToolCard item={tool({ kind: "tool", name: "write_file" })} onAnswer={vi.fn()} native={false} />));
    expect(button("approve-always")).not.toBeNull();
    expect(button("approve-project")).toBeNull();
  });

  it("Settings labels a project rule and revokes just that one", async () => {
    await act(async () => root.render(<Rules />));
    const items = [...host.querySelectorAll<HTMLElement>("[data-kind=persistent]")];
    expect(items.map((li) => li.querySelector("[data-testid=rule-project]")?.textContent ?? null)).toEqual([null, "this project"]);
    await act(async () => items[1]?.querySelector<HTMLButtonElement>("[data-testid=rule-revoke]")?.click());
    expect(revokeRule).toHaveBeenCalledWith("run_shell(touch:*)", "/src/app");
    await act(async () => items[0]?.querySelector<HTMLButtonElement>("[data-testid=rule-revoke]")?.click());
    expect(revokeRule).toHaveBeenLastCalledWith("run_shell(curl:*)", null);
  });
});
