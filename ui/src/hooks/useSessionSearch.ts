// The board's search field from anywhere: `/` outside a text field (in the composer it starts
// a slash command) and Ctrl+K (forwarded by the app) show the sidebar and focus the field.
import { useCallback, useEffect, useState } from "react";

/** Whether a key press is `/` typed outside any text field or dialog. */
export function isSearchKey(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey" | "defaultPrevented" | "target">): boolean {
  if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return false;
  const el = e.target instanceof HTMLElement ? e.target : null;
  return el === null || (!el.isContentEditable && el.closest("input, textarea, select, [role=dialog]") === null);
}

/**
 * A request for the sidebar's search field to take the focus (a counter, 0 once the field
 * took it: a sidebar opened later does not take the focus again), and the action that makes
 * one.
 */
export function useSessionSearch(showSidebar: () => void): { focusSearch: number; searchSessions: () => void; searchFocused: () => void } {
  const [focusSearch, setFocusSearch] = useState(0);
  const searchSessions = useCallback(() => {
    showSidebar();
    setFocusSearch((n) => n + 1);
  }, [showSidebar]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!isSearchKey(e)) return;
      e.preventDefault();
      searchSessions();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [searchSessions]);
  const searchFocused = useCallback(() => setFocusSearch(0), []);
  return { focusSearch, searchSessions, searchFocused };
}
