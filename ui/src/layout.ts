// Which side panels sit beside the chat and which open over it, from the window's width: the
// chat column keeps room to read down to 640 px, and nothing the user needs falls off screen.
import { useEffect, useState } from "react";

/** Below this width the sessions sidebar is a drawer over the chat. */
export const SIDEBAR_DOCK_MIN = 900;
/** Below this width the side panel (todos, timeline, files) is a drawer over the chat. */
export const SIDE_DOCK_MIN = 1100;
/** Below this width the header's secondary actions move into its overflow menu. */
export const HEADER_COMPACT_MAX = 900;

/** The window's inner width, following resizes. */
export function useViewportWidth(): number {
  const [width, setWidth] = useState(() => window.innerWidth);
  useEffect(() => {
    const onResize = () => setWidth(window.innerWidth);
    window.addEventListener("resize", onResize);
    return () => window.removeEventListener("resize", onResize);
  }, []);
  return width;
}

/** How one panel shows: docked in the grid, open as a drawer, or hidden. */
export type PanelPlace = "docked" | "drawer" | "hidden";

/**
 * Where a panel goes: docked when the window is wide enough and the user did not collapse
 * it; otherwise a drawer while the user opened it, else hidden.
 */
export function panelPlace(width: number, dockMin: number, collapsed: boolean, drawerOpen: boolean): PanelPlace {
  if (width >= dockMin) return collapsed ? "hidden" : "docked";
  return drawerOpen ? "drawer" : "hidden";
}
