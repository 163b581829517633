// @vitest-environment jsdom
import { act } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { COPIED_MS, CopyButton, LinkContext, Markdown } from "./components/Markdown";
import { foldersOf } from "./components/FilesPanel";
import type { LinkTarget } from "./markdown";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const written: string[] = [];
vi.mock("@tauri-apps/api/core", () => ({
  invoke: (cmd: string, args: Record<string, unknown>) => {
    if (cmd === "clipboard_write") written.push(String(args.text));
    return Promise.resolve();
  },
  Channel: class {},
}));

let root: Root;
let host: HTMLDivElement;
let opened: LinkTarget[];

beforeEach(() => {
  vi.useFakeTimers();
  host = document.createElement("div");
  document.body.appendChild(host);
  root = createRoot(host);
  opened = [];
  written.length = 0;
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
  vi.useRealTimers();
});

const click = async (el: Element | null) => {
  expect(el).not.toBeNull();
  await act(async () => {
    el?.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true }));
    await Promise.resolve();
  });
};

function show(text: string, withOpener = true) {
  act(() =>
    root.render(
      withOpener ? (
        <LinkContext.Provider value={(t) => opened.push(t)}>
          <Markdown text={text} />
        </LinkContext.Provider>
      ) : (
        <Markdown text={text} />
      ),
    ),
  );
}

describe("links in an answer", () => {
  it("open a workspace file inside Cairn and ask about a web page; nothing navigates", async () => {
    show("Edit [src/app.py](src/app.py) as in [the guide](https://example.com/guide).");
    const [file, web] = [...host.querySelectorAll("a")];
    const navigation = new MouseEvent("click", { bubbles: true, cancelable: true });
    await act(async () => {
      file?.dispatchEvent(navigation);
      await Promise.resolve();
    });
    expect(navigation.defaultPrevented).toBe(true);
    await click(web ?? null);
    expect(opened).toEqual([
      { kind: "file", path: "src/app.py", line: null },
      { kind: "web", url: "https://example.com/guide" },
    ]);
    expect(written).toEqual([]);
  });

  it("copy their address where no chat opens them", async () => {
    show("[src/app.py](src/app.py)", false);
    await click(host.querySelector("a"));
    expect(written).toEqual(["src/app.py"]);
  });
});

describe("Copy", () => {
  it("of a code block sits above the code and says Copied, then Copy again", async () => {
    show("```sh\necho " + "very-long-line-".repeat(40) + "\n```");
    const button = host.querySelector<HTMLButtonElement>("[data-testid=code-copy]");
    // In a bar before the code, not over it.
    expect(button?.parentElement?.className).toBe("code-bar");
    expect(button?.parentElement?.nextElementSibling?.tagName).toBe("PRE");
    await click(button);
    expect(written[0]).toContain("echo very-long-line-");
    expect(button?.textContent).toBe("Copied");
    act(() => vi.advanceTimersByTime(COPIED_MS));
    expect(button?.textContent).toBe("Copy");
  });

  it("of a whole answer copies its markdown and says Copied", async () => {
    act(() => root.render(<CopyButton text={() => "# Answer\n\n- [ ] step"} label="Copy answer" testId="copy-answer" />));
    const button = host.querySelector("[data-testid=copy-answer]");
    await click(button);
    expect(written).toEqual(["# Answer\n\n- [ ] step"]);
    expect(button?.textContent).toBe("Copied");
    expect(button?.getAttribute("data-copied")).toBe("true");
    act(() => vi.advanceTimersByTime(COPIED_MS));
    expect(button?.textContent).toBe("Copy answer");
  });
});

describe("the files panel's reveal", () => {
  it("opens every folder holding the file", () => {
    expect(foldersOf("src/a/b.py")).toEqual(["src", "src/a"]);
    expect(foldersOf("README.md")).toEqual([]);
  });
});
