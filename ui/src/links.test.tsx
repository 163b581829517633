// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LinkContext, Markdown } from "./components/Markdown";
import { useLinks } from "./hooks/useLinks";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const invoked: [string, unknown][] = [];
vi.mock("@tauri-apps/api/core", () => ({
  invoke: (cmd: string, args: unknown) => {
    invoked.push([cmd, args]);
    return Promise.resolve();
  },
  Channel: class {},
}));

let root: Root;
let host: HTMLDivElement;
let filesShown = 0;
let revealed: string | null = null;

/** The chat's part that uses links: the answer, and what the hook shows. */
function Chat({ text }: { text: string }) {
  const links = useLinks(() => filesShown++, () => undefined);
  revealed = links.reveal?.path ?? null;
  return (
    <LinkContext.Provider value={links.openLink}>
      <Markdown text={text} />
      {links.dialog}
    </LinkContext.Provider>
  );
}

const click = (el: Element | null) =>
  act(async () => {
    expect(el).not.toBeNull();
    el?.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
    await Promise.resolve();
  });

beforeEach(() => {
  host = document.createElement("div");
  document.body.appendChild(host);
  root = createRoot(host);
  invoked.length = 0;
  filesShown = 0;
  revealed = null;
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

describe("links in the chat", () => {
  it("show a workspace file in the files panel and never reach the desktop's opener", async () => {
    act(() => root.render(<Chat text="Run [the launcher](tools/run.desktop) or read [src/app.py](./src/app.py#L3)." />));
    const [launcher, source] = [...host.querySelectorAll("a")];
    await click(launcher ?? null);
    expect(revealed).toBe("tools/run.desktop");
    await click(source ?? null);
    expect(revealed).toBe("src/app.py");
    expect(filesShown).toBe(2);
    expect(invoked.filter(([cmd]) => cmd === "open_link")).toEqual([]);
    expect(document.querySelector("[data-testid=link-confirm]")).toBeNull();
  });

  it("ask before a web page opens, showing its whole address; Cancel opens nothing", async () => {
    act(() => root.render(<Chat text="See [the docs](https://example.com/a/very/long/path?q=1)." />));
    await click(host.querySelector("a"));
    expect(document.querySelector("[data-testid=link-confirm-url]")?.textContent).toBe("https://example.com/a/very/long/path?q=1");
    await click(document.querySelector("[data-testid=link-confirm-cancel]"));
    expect(document.querySelector("[data-testid=link-confirm]")).toBeNull();
    expect(invoked).toEqual([]);
    await click(host.querySelector("a"));
    await click(document.querySelector("[data-testid=link-confirm-open]"));
    expect(invoked).toEqual([["open_link", { url: "https://example.com/a/very/long/path?q=1" }]]);
  });
});
