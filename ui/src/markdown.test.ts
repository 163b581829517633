// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { highlight, linkTarget, renderMarkdown } from "./markdown";

/** The rendered HTML parsed back, to assert on elements rather than on strings. */
function dom(markdown: string): HTMLElement {
  const el = document.createElement("div");
  el.innerHTML = renderMarkdown(markdown);
  return el;
}

/** Every attribute of every element whose name starts with "on" (event handlers). */
function handlers(el: HTMLElement): string[] {
  return [...el.querySelectorAll("*")].flatMap((n) => [...n.attributes].map((a) => a.name).filter((a) => a.startsWith("on")));
}

describe("renderMarkdown (model output is untrusted)", () => {
  it("renders ordinary markdown", () => {
    const el = dom("# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n\n```rust\nfn main() {}\n```");
    expect(el.querySelector("h1")?.textContent).toBe("Title");
    expect(el.querySelector("strong")?.textContent).toBe("bold");
    expect(el.querySelectorAll("li")).toHaveLength(2);
    expect(el.querySelector("pre code")?.textContent).toContain("fn main() {}");
    expect(el.querySelector("pre code span")).not.toBeNull();
  });

  const attacks: [string, string][] = [
    ["a script tag", "<script>window.pwned = 1</script>"],
    ["an img with onerror", '<img src=x onerror="window.pwned = 1">'],
    ["an svg with onload", '<svg onload="window.pwned = 1"><circle r="1"/></svg>'],
    ["an iframe", '<iframe src="https://evil.example"></iframe>'],
    ["a style tag", "<style>body { display: none }</style>"],
    ["a form", '<form action="https://evil.example"><input name=x></form>'],
    ["inline html in a paragraph", 'hello <b onclick="alert(1)">there</b>'],
    ["html inside a list item", "- <a href=\"javascript:alert(1)\">x</a>"],
    ["a details/summary toggle", "<details open ontoggle=alert(1)><summary>x</summary></details>"],
  ];
  for (const [name, source] of attacks) {
    it(`keeps ${name} inert`, () => {
      const el = dom(source);
      for (const tag of ["script", "img", "svg", "iframe", "style", "form", "input", "b", "details"]) {
        expect(el.querySelector(tag), tag).toBeNull();
      }
      expect(handlers(el)).toEqual([]);
      expect(el.querySelector("a[href^='javascript']")).toBeNull();
    });
  }

  it("keeps only http(s), mailto and relative links, marks them and shows their target", () => {
    const el = dom("[ok](https://example.com/a \"the model's title\") [mail](mailto:a@b.c) [bad](javascript:alert(1)) [data](data:text/html,<b>x</b>) [vb](vbscript:x) [file](file:///etc/passwd) [abs](/etc/passwd) [home](~/.ssh/id_rsa)");
    const links = [...el.querySelectorAll("a")];
    expect(links.map((a) => a.getAttribute("href"))).toEqual(["https://example.com/a", "mailto:a@b.c"]);
    expect(links.map((a) => a.getAttribute("data-link"))).toEqual(["web", "mail"]);
    for (const a of links) {
      expect(a.getAttribute("class")).toBe("md-link");
      expect(a.getAttribute("data-tip")).toBe(a.getAttribute("href"));
      expect(a.hasAttribute("title")).toBe(false);
    }
    expect(el.textContent).toContain("[bad](javascript:alert(1))");
    expect(el.textContent).toContain("[file](file:///etc/passwd)");
    expect(el.textContent).toContain("[abs](/etc/passwd)");
    expect(el.textContent).toContain("[home](~/.ssh/id_rsa)");
  });

  it("makes a relative link a workspace file link (never one that climbs out)", () => {
    const el = dom("See [src/app.py](src/app.py), [the line](./src/lib.rs#L12) and [out](../../etc/passwd).");
    const links = [...el.querySelectorAll("a")];
    expect(links.map((a) => [a.getAttribute("href"), a.getAttribute("data-link"), a.getAttribute("data-tip")])).toEqual([
      ["src/app.py", "file", "src/app.py"],
      ["./src/lib.rs#L12", "file", "src/lib.rs"],
      // Climbs out of the workspace: no address, nothing to open.
      [null, null, "../../etc/passwd"],
    ]);
  });

  it("renders task lists as disabled checkboxes the model cannot make itself", () => {
    const el = dom("- [ ] write the test\n- [x] read the code\n- plain [x] item\n\n<input type=checkbox onclick=alert(1)>");
    const boxes = [...el.querySelectorAll("input")];
    expect(boxes).toHaveLength(2);
    expect(boxes.map((b) => [b.type, b.disabled, b.checked])).toEqual([
      ["checkbox", true, false],
      ["checkbox", true, true],
    ]);
    expect(el.querySelectorAll("li.md-task")).toHaveLength(2);
    expect(el.querySelectorAll("li")[0]?.textContent?.trim()).toBe("write the test");
    expect(el.querySelectorAll("li")[2]?.textContent).toBe("plain [x] item");
    expect(handlers(el)).toEqual([]);
  });

  it("honours table alignment with classes (no style attribute)", () => {
    const el = dom("| name | kind | size |\n|:--|:-:|--:|\n| a | file | 12 |");
    const cells = [...el.querySelectorAll("th, td")];
    expect(cells.map((c) => c.className)).toEqual(["md-align-left", "md-align-center", "md-align-right", "md-align-left", "md-align-center", "md-align-right"]);
    expect(el.querySelector("[style]")).toBeNull();
  });
  it("shows images as text and never loads them", () => {
    const el = dom("![tracking pixel](https://evil.example/p.png)");
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toContain("tracking pixel");
  });

  it("renders the same text the same way twice (cache) and still sanitised", () => {
    const source = "<img src=x onerror=alert(1)> and *em*";
    expect(renderMarkdown(source)).toBe(renderMarkdown(source));
    expect(dom(source).querySelector("img")).toBeNull();
  });
});

describe("highlight", () => {
  it("escapes code in unknown languages", () => {
    expect(highlight("<script>x</script>", "nope")).toBe("&lt;script&gt;x&lt;/script&gt;");
  });

  it("escapes code inside a known language's markup", () => {
    const el = document.createElement("div");
    el.innerHTML = highlight('const s = "<img src=x onerror=alert(1)>";', "ts");
    expect(el.querySelector("img")).toBeNull();
    expect(el.textContent).toContain("<img src=x onerror=alert(1)>");
  });
});

describe("linkTarget", () => {
  it("reads workspace paths with their line, web pages and mail addresses", () => {
    expect(linkTarget("src/app.py")).toEqual({ kind: "file", path: "src/app.py", line: null });
    expect(linkTarget("./src//a/../b.rs#L7-L9")).toEqual({ kind: "file", path: "src/b.rs", line: 7 });
    expect(linkTarget("src/main.rs:42")).toEqual({ kind: "file", path: "src/main.rs", line: 42 });
    expect(linkTarget("docs/My%20Notes.md")).toEqual({ kind: "file", path: "docs/My Notes.md", line: null });
    expect(linkTarget("https://example.com/x")).toEqual({ kind: "web", url: "https://example.com/x" });
    expect(linkTarget("mailto:a@b.c")).toEqual({ kind: "mail", address: "a@b.c" });
  });

  it("refuses what is not a workspace file", () => {
    for (const bad of ["../x", "a/../../x", "/etc/passwd", "~/x", "file:///etc/passwd", "javascript:alert(1)", "#top", ".", "%E0%A4%A"]) {
      expect(linkTarget(bad), bad).toBeNull();
    }
  });
});
