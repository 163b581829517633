// The terminal panel: xterm.js views of the workspace's terminals (the user's shells, which
// the agent can read) and of the agent's command sessions (where the user answers a prompt).
// Every tab stays mounted while the panel is open so its output keeps flowing.
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import type { TerminalTab } from "../bindings/app/TerminalTab";
import { useT } from "../i18n";
import * as ipc from "../ipc";
import { orderedInput, TypeAhead, type OrderedInput } from "../terminalInput";

/** How often the tab list is refreshed (agent command sessions come and go). */
const REFRESH_MS = 1500;

/** Copies text: Cairn's clipboard command, else the browser clipboard. */
async function copyText(text: string): Promise<void> {
  if (text === "") return;
  try {
    await ipc.clipboardWrite(text);
  } catch (e) {
    if (navigator.clipboard === undefined) throw e;
    await navigator.clipboard.writeText(text);
  }
}

/** The clipboard's text: Cairn's clipboard command, else the browser clipboard. */
async function clipboardText(): Promise<string> {
  try {
    return await ipc.clipboardRead();
  } catch (e) {
    if (navigator.clipboard === undefined) throw e;
    return navigator.clipboard.readText();
  }
}

/** Whether a key event is the terminal copy (Ctrl+Shift+C) or paste (Ctrl+Shift+V) chord. */
function chord(e: KeyboardEvent): "copy" | "paste" | null {
  if (!e.ctrlKey || !e.shiftKey || e.altKey || e.metaKey) return null;
  const key = e.key.toLowerCase();
  if (key === "c" || e.code === "KeyC") return "copy";
  if (key === "v" || e.code === "KeyV") return "paste";
  return null;
}

/** What the panel can do with a terminal once it exists: focus it, type into it. */
type Ready = { focus: () => void; type: (data: string) => void };

function XTerm({ tab, active, fail, onReady }: { tab: TerminalTab; active: boolean; fail: (e: unknown) => void; onReady: (id: string, ready: Ready | null) => void }) {
  const t = useT();
  const host = useRef<HTMLDivElement>(null);
  const fit = useRef<FitAddon | null>(null);
  const termRef = useRef<Terminal | null>(null);
  const inputRef = useRef<OrderedInput | null>(null);
  const [menu, setMenu] = useState<{ x: number; y: number } | null>(null);
  useEffect(() => {
    const el = host.current;
    if (el === null) return;
    const styles = getComputedStyle(document.documentElement);
    const term = new Terminal({
      cursorBlink: true,
      fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace",
      fontSize: 13,
      scrollback: 5000,
      theme: {
        background: styles.getPropertyValue("--code-bg").trim() || "#1e1e1e",
        foreground: styles.getPropertyValue("--text").trim() || "#dddddd",
        cursor: styles.getPropertyValue("--accent").trim() || "#d9a441",
      },
    });
    const addon = new FitAddon();
    term.loadAddon(addon);
    term.open(el);
    fit.current = addon;
    let disposed = false;
    const sendSize = () => {
      if (disposed || el.clientWidth === 0) return;
      addon.fit();
      ipc.terminalResize(tab.id, term.cols, term.rows).catch(() => undefined);
    };
    sendSize();
    ipc.terminalAttach(tab.id, (bytes) => {
      if (!disposed) term.write(bytes);
    }).catch(fail);
    const ordered = orderedInput(ipc.terminalTypist(tab.id, fail));
    const input = term.onData(ordered.type);
    termRef.current = term;
    inputRef.current = ordered;
    onReady(tab.id, { focus: () => term.focus(), type: ordered.type });
    // Ctrl+Shift+C / Ctrl+Shift+V; a plain Ctrl+C still reaches the shell as an interrupt.
    // Pastes go through xterm's `paste` (bracketed-paste aware), then `onData` above.
    term.attachCustomKeyEventHandler((e) => {
      // Ctrl+` is the app's (show or hide the panel), not a key for the shell.
      if ((e.ctrlKey || e.metaKey) && e.key === "`") return false;
      const what = chord(e);
      if (what === null) return true;
      e.preventDefault();
      if (e.type === "keydown") {
        if (what === "copy") copyText(term.getSelection()).catch(fail);
        else ordered.paste(clipboardText(), (text) => term.paste(text), fail);
      }
      return false;
    });
    const observer = new ResizeObserver(sendSize);
    observer.observe(el);
    return () => {
      disposed = true;
      onReady(tab.id, null);
      observer.disconnect();
      input.dispose();
      term.dispose();
      termRef.current = null;
      inputRef.current = null;
      fit.current = null;
    };
  }, [tab.id, fail, onReady]);
  useEffect(() => {
    if (active) requestAnimationFrame(() => fit.current?.fit());
  }, [active]);
  const copy = () => {
    setMenu(null);
    copyText(termRef.current?.getSelection() ?? "").catch(fail);
  };
  const paste = () => {
    setMenu(null);
    const apply = (text: string) => {
      termRef.current?.paste(text);
      termRef.current?.focus();
    };
    if (inputRef.current !== null) inputRef.current.paste(clipboardText(), apply, fail);
    else clipboardText().then(apply, fail);
  };
  return (
    <div
      className={`xterm-host ${active ? "" : "xterm-hidden"}`}
      ref={host}
      data-testid="terminal-view"
      data-terminal={tab.id}
      data-active={active}
      onContextMenu={(e) => {
        e.preventDefault();
        const box = e.currentTarget.getBoundingClientRect();
        setMenu({ x: e.clientX - box.left, y: e.clientY - box.top });
      }}
      onClick={() => setMenu(null)}
    >
      {menu !== null && (
        <div className="terminal-menu" role="menu" style={{ left: menu.x, top: menu.y }} data-testid="terminal-menu">
          <button type="button" role="menuitem" data-testid="terminal-copy" disabled={!(termRef.current?.hasSelection() ?? false)} onClick={copy}>
            {t("terminal.copySelection")} <kbd>Ctrl+Shift+C</kbd>
          </button>
          <button type="button" role="menuitem" data-testid="terminal-paste" onClick={paste}>
            {t("terminal.pasteClipboard")} <kbd>Ctrl+Shift+V</kbd>
          </button>
        </div>
      )}
    </div>
  );
}

/** The terminal panel under the chat. */
export function TerminalPanel({
  fail,
  epoch,
  openIn = null,
  focusAt = 0,
  typeAhead: shared,
}: {
  fail: (e: unknown) => void;
  epoch: number;
  /** Asks for a new terminal in a worktree (each request once, by its time). */
  openIn?: { worktree: string; at: number } | null;
  /** Bumped to put the focus in the shown terminal (Ctrl+`); keys typed before it is ready wait for it. */
  focusAt?: number;
  /** Where those keys wait (shared with the panel's loading placeholder). */
  typeAhead?: TypeAhead;
}) {
  const t = useT();
  const [tabs, setTabs] = useState<TerminalTab[]>([]);
  const [active, setActive] = useState<string | null>(null);
  const refresh = useCallback(() => {
    ipc.terminalList().then((list) => {
      setTabs(list);
      setActive((cur) => (cur !== null && list.some((x) => x.id === cur) ? cur : (list[0]?.id ?? null)));
    }, fail);
  }, [fail]);
  useEffect(() => {
    refresh();
    const timer = window.setInterval(refresh, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [refresh, epoch]);
  const open = useCallback(() => {
    ipc.terminalOpen(100, 24).then((tab) => {
      setTabs((cur) => [...cur.filter((x) => x.id !== tab.id), tab]);
      setActive(tab.id);
    }, fail);
  }, [fail]);
  // Opened with no terminal yet, the panel starts a shell at once (not when it was opened to
  // start one in a worktree).
  const startedWith = useRef(openIn);
  useEffect(() => {
    if (startedWith.current !== null) return;
    let live = true;
    ipc.terminalList().then((list) => {
      if (live && list.length === 0) open();
    }, fail);
    return () => {
      live = false;
    };
  }, [open, fail]);
  const opened = useRef(0);
  useEffect(() => {
    if (openIn === null || openIn.at <= opened.current) return;
    opened.current = openIn.at;
    ipc.terminalOpen(100, 24, openIn.worktree).then((tab) => {
      setTabs((cur) => [...cur.filter((x) => x.id !== tab.id), tab]);
      setActive(tab.id);
    }, fail);
  }, [openIn, fail]);
  const close = (id: string) => {
    ipc.terminalClose(id).then(refresh, fail);
  };
  // Ctrl+`: the shown terminal takes the focus; until one is ready the panel itself holds it
  // and keeps what is typed (handed to the terminal when it is).
  const section = useRef<HTMLElement>(null);
  const ready = useRef(new Map<string, Ready>());
  const activeRef = useRef(active);
  activeRef.current = active;
  const wantFocus = useRef(false);
  const own = useRef(new TypeAhead());
  const typeAhead = useRef(shared ?? own.current);
  typeAhead.current = shared ?? own.current;
  const deliver = useCallback((r: Ready) => {
    wantFocus.current = false;
    const typed = typeAhead.current.take();
    if (typed !== "") r.type(typed);
    r.focus();
  }, []);
  const onReady = useCallback(
    (id: string, r: Ready | null) => {
      if (r === null) {
        ready.current.delete(id);
        return;
      }
      ready.current.set(id, r);
      if (wantFocus.current && (activeRef.current === null || activeRef.current === id)) deliver(r);
    },
    [deliver],
  );
  // At commit (not after paint): a key typed meanwhile must not land outside the panel.
  useLayoutEffect(() => {
    if (focusAt === 0) return;
    const r = activeRef.current === null ? undefined : ready.current.get(activeRef.current);
    if (r !== undefined) deliver(r);
    else {
      wantFocus.current = true;
      section.current?.focus();
    }
  }, [focusAt, deliver]);
  useEffect(() => {
    const r = active === null ? undefined : ready.current.get(active);
    if (wantFocus.current && r !== undefined) deliver(r);
  }, [active, deliver]);
  return (
    <section
      ref={section}
      tabIndex={-1}
      className="terminal-panel"
      data-testid="terminal-panel"
      aria-label={t("terminal.title")}
      onKeyDown={(e) => {
        if (e.target === e.currentTarget && wantFocus.current && typeAhead.current.key(e)) e.preventDefault();
      }}
    >
      <div className="terminal-tabs" role="tablist">
        {tabs.map((tab) => (
          <div
            key={tab.id}
            role="tab"
            aria-selected={tab.id === active}
            className={`terminal-tab ${tab.id === active ? "terminal-tab-active" : ""} terminal-tab-${tab.kind}`}
            data-testid="terminal-tab"
            data-terminal={tab.id}
            data-kind={tab.kind}
            data-running={tab.running}
            onClick={() => setActive(tab.id)}
            data-tip={tab.title}
          >
            {tab.kind === "agent" && <span className="terminal-badge">{t("terminal.agent")}</span>}
            <span className="terminal-tab-title">{tab.title}</span>
            {!tab.running && <span className="terminal-ended">· {t("terminal.ended")}</span>}
            {tab.kind === "user" && (
              <button
                type="button"
                className="terminal-tab-close"
                aria-label={t("terminal.close")}
                onClick={(e) => {
                  e.stopPropagation();
                  close(tab.id);
                }}
              >
                ×
              </button>
            )}
          </div>
        ))}
        <button type="button" className="icon-button terminal-new" data-tip={t("terminal.new")} aria-label={t("terminal.new")} data-testid="terminal-new" onClick={open}>
          +
        </button>
      </div>
      <div className="terminal-body">
        {tabs.length === 0 && <p className="sidebar-empty terminal-empty">{t("terminal.empty")}</p>}
        {tabs.map((tab) => (
          <XTerm key={tab.id} tab={tab} active={tab.id === active} fail={fail} onReady={onReady} />
        ))}
      </div>
    </section>
  );
}
