// Ctrl+F in a chat: the search field's state (../sessionFind.ts), the runtime's search of
// the whole log as the user types, and each current hit shown (its page loaded).
import { useCallback, useEffect, useRef, useState } from "react";
import type { SearchHit } from "../bindings/app/SearchHit";
import * as ipc from "../ipc";
import { answered, closed, closedFind, currentHit, opened, step, typed, type FindState } from "../sessionFind";

/** How long typing pauses before the log is searched (ms). */
const TYPING_MS = 150;

/** What the search field offers. */
export type Find = {
  state: FindState;
  /** The hit shown, if any. */
  hit: SearchHit | null;
  /** Bumped on each Ctrl+F: the field takes the focus. */
  focusAt: number;
  type: (query: string) => void;
  step: (back: boolean) => void;
  close: () => void;
};

/** Whether a key press is Ctrl+F (Cmd+F) outside the terminal (where the shell has it). */
export function isFindKey(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey" | "shiftKey" | "target">): boolean {
  if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || e.key.toLowerCase() !== "f") return false;
  const el = e.target instanceof Element ? e.target : null;
  return el === null || el.closest(".terminal-panel") === null;
}

/** The search of the shown session; `show` brings a hit into view. */
export function useFind(show: (hit: SearchHit) => void, fail: (e: unknown) => void): Find {
  const [state, setState] = useState<FindState>(closedFind);
  const [focusAt, setFocusAt] = useState(0);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!isFindKey(e)) return;
      // A dialog over the chat keeps its own keys.
      if (document.querySelector("[role=dialog]") !== null) return;
      e.preventDefault();
      setState(opened);
      setFocusAt(Date.now());
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  // The log is searched once typing pauses; a late answer to an older query is dropped.
  const query = state.query.trim();
  useEffect(() => {
    if (query === "") return;
    const timer = window.setTimeout(() => {
      ipc.searchSession(query).then((r) => setState((s) => answered(s, r)), fail);
    }, TYPING_MS);
    return () => window.clearTimeout(timer);
  }, [query, fail]);
  const hit = currentHit(state);
  // Each new current hit is brought into view once.
  const showRef = useRef(show);
  showRef.current = show;
  const shown = useRef<SearchHit | null>(null);
  useEffect(() => {
    if (hit === null || hit === shown.current) return;
    shown.current = hit;
    showRef.current(hit);
  }, [hit]);
  const type = useCallback((q: string) => setState((s) => typed(s, q)), []);
  const stepTo = useCallback((back: boolean) => {
    shown.current = null;
    setState((s) => step(s, back));
  }, []);
  const close = useCallback(() => {
    shown.current = null;
    setState(closed);
  }, []);
  return { state, hit, focusAt, type, step: stepTo, close };
}
