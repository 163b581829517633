// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { CheckRow } from "./bindings/app/CheckRow";

const rows: CheckRow[] = [
  { group: "sandbox", check: "user namespaces", status: "problem", detail: "restricted by AppArmor", action: "load the profile\ndo not set the sysctl", ms: 3 },
  { group: "keyring", check: "secret service", status: "ok", detail: "the OS keyring answers", ms: 1 },
  { group: "provider", check: "openai endpoint", status: "skipped", detail: "--offline", ms: 0 },
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
    ["keyring", "ok"],
    ["provider", "skipped"],
  ]);
  expect(shown[0]?.textContent).toContain("→ load the profile");
  expect(shown[1]?.textContent).not.toContain("→");
  expect(host.querySelector("[data-testid=diagnostics-summary]")!.textContent).toBe("1 problem found.");
});
