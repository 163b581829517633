import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { DirListing } from "../bindings/app/DirListing";
import type { FilesEvent } from "../bindings/app/FilesEvent";
import { useT } from "../i18n";
import * as ipc from "../ipc";

type Props = {
  /** Files the agent changed in this session (relative paths). */
  changed: Set<string>;
  /** Clicking a file mentions it in the prompt. */
  onMention: (path: string) => void;
  /** A file to show (a link in the chat): its folders open, it is scrolled to and marked. */
  reveal?: { path: string; at: number } | null;
};

/** The folders holding `path`, outermost first ("src/a/b.py" → "src", "src/a"). */
export function foldersOf(path: string): string[] {
  const parts = path.split("/").filter((p) => p !== "");
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"));
}

/** Every folder holding a changed file (so a collapsed folder shows the mark too). */
function withAncestors(changed: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const path of changed) {
    const parts = path.replace(/\/$/, "").split("/");
    for (let i = 1; i <= parts.length; i++) out.add(parts.slice(0, i).join("/"));
  }
  return out;
}

/**
 * The workspace's file tree beside the chat: ignored files left out, folders expanded on
 * demand, refreshed live from the window's file watcher (or with the refresh button when the
 * watcher could not start: the reason is shown), files the agent changed marked.
 */
export function FilesPanel({ changed, onMention, reveal = null }: Props) {
  const t = useT();
  const [dirs, setDirs] = useState<Map<string, DirListing>>(new Map());
  const [open, setOpen] = useState<Set<string>>(new Set([""]));
  const [watchError, setWatchError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const openRef = useRef(open);
  openRef.current = open;
  const marked = useMemo(() => withAncestors(changed), [changed]);

  const load = useCallback((path: string) => {
    ipc.listDir(path).then(
      (listing) => {
        setDirs((m) => new Map(m).set(path, listing));
        if (path === "") setError(null);
      },
      (e: unknown) => {
        // A folder that went away: forget it (its parent's refresh drops its entry).
        if (path === "") setError(ipc.describeError(e));
        setDirs((m) => {
          const next = new Map(m);
          next.delete(path);
          return next;
        });
        setOpen((s) => {
          const next = new Set(s);
          next.delete(path);
          return next;
        });
      },
    );
  }, []);

  const refreshShown = useCallback(() => {
    for (const path of openRef.current) load(path);
  }, [load]);

  useEffect(() => {
    let live = true;
    load("");
    const onEvent = (event: FilesEvent) => {
      if (!live) return;
      if (event.kind === "failed") {
        setWatchError(event.message);
        refreshShown();
        return;
      }
      const shown = openRef.current;
      const dirsToLoad = event.all ? [...shown] : event.dirs.filter((d) => shown.has(d));
      for (const d of dirsToLoad) load(d);
    };
    ipc.watchFiles(onEvent).then(
      (status) => {
        if (live) setWatchError(status.error);
      },
      (e: unknown) => {
        if (live) setWatchError(ipc.describeError(e));
      },
    );
    return () => {
      live = false;
    };
  }, [load, refreshShown]);

  // A link in the chat: open the file's folders, then mark it (or say it is not there).
  const [revealed, setRevealed] = useState<string | null>(null);
  const [missing, setMissing] = useState<string | null>(null);
  useEffect(() => {
    if (reveal === null) return;
    const folders = foldersOf(reveal.path);
    for (const f of ["", ...folders]) load(f);
    setOpen((s) => new Set([...s, "", ...folders]));
    setRevealed(reveal.path);
    setMissing(null);
  }, [reveal, load]);
  const parent = revealed === null ? null : (foldersOf(revealed).at(-1) ?? "");
  const parentListing = parent === null ? undefined : dirs.get(parent);
  useEffect(() => {
    if (revealed === null || parentListing === undefined) return;
    const found = parentListing.entries.some((e) => e.path === revealed);
    if (!found) {
      setMissing(revealed);
      return;
    }
    const node = document.querySelector<HTMLElement>(`[data-testid=file-node][data-path="${CSS.escape(revealed)}"]`);
    node?.scrollIntoView?.({ block: "center" });
    node?.focus();
  }, [revealed, parentListing]);

  const toggle = (path: string) => {
    const opening = !open.has(path);
    if (opening) load(path);
    setOpen((s) => {
      const next = new Set(s);
      if (opening) next.add(path);
      else next.delete(path);
      return next;
    });
  };

  const renderDir = (path: string, depth: number) => {
    const listing = dirs.get(path);
    if (listing === undefined) return <p className="files-loading" style={{ paddingLeft: depth * 12 + 8 }}>…</p>;
    if (listing.entries.length === 0 && depth === 0) return <p className="sidebar-empty">{t("files.empty")}</p>;
    return (
      <ul className="files-tree" role={depth === 0 ? "tree" : "group"}>
        {listing.entries.map((e) => {
          const isOpen = e.dir && open.has(e.path);
          const isChanged = marked.has(e.path);
          return (
            <li key={e.path} role="treeitem" aria-expanded={e.dir ? isOpen : undefined}>
              <button
                type="button"
                className={`file-node ${e.dir ? "file-dir" : "file-file"} ${isChanged ? "file-changed" : ""} ${e.path === revealed ? "file-node-revealed" : ""}`}
                data-revealed={e.path === revealed ? "true" : undefined}
                style={{ paddingLeft: depth * 12 + 6 }}
                data-testid="file-node"
                data-path={e.path}
                data-dir={e.dir ? "true" : "false"}
                data-changed={isChanged ? "true" : "false"}
                data-tip={e.dir ? e.path : `${e.path} — ${t("files.mention")}`}
                onClick={() => (e.dir ? toggle(e.path) : onMention(e.path))}
              >
                <span className="file-caret" aria-hidden="true">{e.dir ? (isOpen ? "▾" : "▸") : ""}</span>
                <span className="file-name">{e.name}{e.link ? " ↪" : ""}</span>
                {isChanged && (
                  <span className="file-mark" data-tip={t("files.changed")} aria-label={t("files.changed")}>
                    ●
                  </span>
                )}
              </button>
              {isOpen && renderDir(e.path, depth + 1)}
            </li>
          );
        })}
        {listing.truncated && <li className="sidebar-empty">{t("files.truncated")}</li>}
      </ul>
    );
  };

  return (
    <section className="panel-section files-panel" data-testid="files-panel">
      <h2 className="sidebar-title files-title">
        {t("files.title")}
        <button type="button" className="icon-button files-refresh" data-tip={t("files.refresh")} aria-label={t("files.refresh")} data-testid="files-refresh" onClick={refreshShown}>
          ↻
        </button>
      </h2>
      {watchError !== null && (
        <p className="files-warning" role="status" data-testid="files-watch-error">
          {t("files.noWatch")} {watchError}
        </p>
      )}
      {missing !== null && (
        <p className="files-warning" role="status" data-testid="files-missing">
          {missing} {t("files.notInWorkspace")}
        </p>
      )}
      {error !== null ? (
        <p className="files-warning" role="alert">{error}</p>
      ) : (
        renderDir("", 0)
      )}
    </section>
  );
}
