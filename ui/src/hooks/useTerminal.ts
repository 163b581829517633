// The terminal panel's state: shown or not, a terminal asked for in a worktree, and Ctrl+`
// (show it with the focus in its terminal; pressed in the terminal, hide it).
import { useCallback, useEffect, useRef, useState, type RefObject } from "react";
import { TypeAhead } from "../terminalInput";

/** The terminal panel as the workbench drives it. */
export type TerminalState = {
  shown: boolean;
  /** A terminal asked for in a worktree ("Open terminal here"). */
  openIn: { worktree: string; at: number } | null;
  /** Bumped when the terminal should take the focus. */
  focusAt: number;
  /** What is typed after Ctrl+` before a terminal is ready (the panel still loading). */
  typeAhead: TypeAhead;
  /** Ctrl+` and the header button: show and focus, or hide when the focus is in it. */
  toggle: () => void;
  /** The header's button: hide when shown, else show and focus. */
  click: () => void;
  /** Shows the panel with a new terminal in worktree NAME. */
  openInWorktree: (name: string) => void;
};

/** Whether the focus is inside the terminal panel. */
const focusInTerminal = () => document.activeElement?.closest(".terminal-panel") != null;

/** The terminal panel; `composer` gets the focus back when Ctrl+` hides it. */
export function useTerminal(composer: RefObject<HTMLTextAreaElement | null>): TerminalState {
  const [shown, setShown] = useState(false);
  const [openIn, setOpenIn] = useState<{ worktree: string; at: number } | null>(null);
  const [focusAt, setFocusAt] = useState(0);
  const [typeAhead] = useState(() => new TypeAhead());
  const shownRef = useRef(shown);
  shownRef.current = shown;
  const toggle = useCallback(() => {
    if (shownRef.current && focusInTerminal()) {
      setShown(false);
      composer.current?.focus();
    } else {
      setShown(true);
      setFocusAt((n) => n + 1);
    }
  }, [composer]);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key === "`") {
        e.preventDefault();
        toggle();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [toggle]);
  const openInWorktree = useCallback((name: string) => {
    setShown(true);
    setOpenIn({ worktree: name, at: Date.now() });
    setFocusAt((n) => n + 1);
  }, []);
  const click = useCallback(() => {
    if (shownRef.current) setShown(false);
    else {
      setShown(true);
      setFocusAt((n) => n + 1);
    }
  }, []);
  return { shown, openIn, focusAt, typeAhead, toggle, click, openInWorktree };
}
