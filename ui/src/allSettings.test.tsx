// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SettingOption } from "./bindings/app/SettingOption";
import type { SettingsView } from "./bindings/app/SettingsView";

const option = (key: string, value: string | null, source: string): SettingOption => ({
  key,
  value,
  source,
  env: source === "env" ? "CAIRN_VISION_PROVIDER" : null,
  variables: [],
  default: "the session's",
  about: "",
  kind: "text",
  choices: [],
});

const view = (options: SettingOption[]): SettingsView => ({
  provider: "deepseek",
  model: "deepseek-chat",
  baseUrl: "",
  reasoning: "",
  language: "en",
  providers: [],
  models: [],
  mcp: [],
  turnLimit: 4,
  sandboxedUnasked: false,
  options,
  configFile: "/home/u/.config/cairn/config.toml",
});

const setSetting = vi.fn((_k: string, _v: string) => Promise.resolve(view([])));
vi.mock("./ipc", async (original) => ({
  ...(await original<typeof import("./ipc")>()),
  setSetting: (k: string, v: string) => setSetting(k, v),
}));

const { AllSettings } = await import("./components/AllSettings");

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
  host.remove();
});

describe("All settings", () => {
  it("shows each key's source and says when images go to another provider", () => {
    const settings = view([option("vision.model", "gpt-4o", "file"), option("vision.provider", "openai", "env")]);
    act(() => root.render(<AllSettings settings={settings} onChanged={() => undefined} />));
    expect(host.textContent).toContain("config.toml");
    const row = host.querySelector("[data-testid='setting-vision.provider']");
    expect(row?.textContent).toContain("CAIRN_VISION_PROVIDER");
    expect(host.querySelector("[data-testid=vision-provider-differs]")?.textContent).toContain("deepseek");
  });

  it("says nothing when the vision model runs on the session's provider", () => {
    const settings = view([option("vision.provider", "deepseek", "file")]);
    act(() => root.render(<AllSettings settings={settings} onChanged={() => undefined} />));
    expect(host.querySelector("[data-testid=vision-provider-differs]")).toBeNull();
  });
});
