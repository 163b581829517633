// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { CheckRow } from "./bindings/app/CheckRow";

const rows: CheckRow[] = [
  {
    group: "sandbox",
    check: "user namespaces",
    status: "problem",
    detail: "restricted by AppArmor",
    action: "load the profile\ndo not set the sysctl",
    fix: { kind: "system_steps", steps: ["load the profile", "do not set the sysctl"] },
    ms: 3,
  },
  {
    group: "provider",
    check: "openai endpoint",
    status: "problem",
    detail: "the endpoint refused the API key (HTTP 401)",
    action: "store a valid key: cairn auth set openai",
    fix: { kind: "replace_key", provider: "openai" },
    ms: 4,
  },
  { group: "keyring", check: "secret service", status: "ok", detail: "the OS keyring answers", ms: 1 },
  { group: "provider", check: "anthropic endpoint", status: "skipped", detail: "offline", ms: 0 },
];
const runDiagnostics = vi.fn((_offline: boolean) => Promise.resolve(rows));
vi.mock("./ipc", async (original) => ({
  ...(await original<typeof import("./ipc")>()),
  runDiagnostics: (offline: boolean) => runDiagnostics(offline),
}));

const { Diagnostics } = await import("./components/Diagnostics");

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
  runDiagnostics.mockClear();
});

it("runs the checks only when asked and renders each typed row with what to do", async () => {
  await act(async () => root.render(<Diagnostics />));
  expect(runDiagnostics).not.toHaveBeenCalled();
  expect(host.querySelectorAll("[data-testid=diagnostics-row]")).toHaveLength(0);
  const run = host.querySelector<HTMLButtonElement>("[data-testid=diagnostics-run]")!;
  await act(async () => run.click());
  expect(runDiagnostics).toHaveBeenCalledWith(false);
  const shown = [...host.querySelectorAll<HTMLElement>("[data-testid=diagnostics-row]")];
  expect(shown.map((r) => [r.dataset.group, r.dataset.status])).toEqual([
    ["sandbox", "problem"],
    ["provider", "problem"],
    ["keyring", "ok"],
    ["provider", "skipped"],
  ]);
  expect(shown[0]?.querySelector("pre")?.textContent).toBe("load the profile\ndo not set the sysctl");
  // The typed fix in the app's words: where to go in the app, never the CLI's command.
  expect(shown[1]?.textContent).toContain("→ Replace the openai key in Settings → API key");
  expect(host.textContent).not.toContain("cairn ");
  expect(shown[2]?.textContent).not.toContain("→");
  expect(host.querySelector("[data-testid=diagnostics-summary]")!.textContent).toBe("2 problems found.");
});
