// The sessions board of a workbench: a store outside React fed by the board channel, and
// the sessions the user asked to open from outside the page (a notification's click).
import { useEffect, useRef, useState } from "react";
import type { BoardView } from "../bindings/app/BoardView";
import { BoardStore } from "../board";
import * as ipc from "../ipc";
import { useStore } from "../store";

/** The board store and its latest board; `open` is called once per open request. */
export function useBoard(open: (id: string) => void, fail: (e: unknown) => void): { boards: BoardStore; board: BoardView | null } {
  const [boards] = useState(() => new BoardStore());
  const board = useStore(boards).view;
  // Pushed by the backend whenever a session's state changes (or another process saved one).
  useEffect(() => {
    ipc.watchBoard((b) => boards.receive(b)).catch(fail);
  }, [fail, boards]);
  const openRequest = board?.openRequest ?? null;
  const handled = useRef(0);
  useEffect(() => {
    if (openRequest === null || openRequest.seq <= handled.current) return;
    handled.current = openRequest.seq;
    open(openRequest.id);
  }, [openRequest, open]);
  return { boards, board };
}
