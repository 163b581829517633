// Where the sessions sidebar and the side panel show (docked, drawer, hidden), from the
// window's width and what the user toggled; one job: the panels' places.
import { useCallback, useState } from "react";
import { HEADER_COMPACT_MAX, panelPlace, SIDE_DOCK_MIN, SIDEBAR_DOCK_MIN, useViewportWidth, type PanelPlace } from "../layout";

/** The panels' places and the ways to change them. */
export type Panels = {
  sidebarAt: PanelPlace;
  sideAt: PanelPlace;
  /** The header's secondary actions go into its overflow menu. */
  compact: boolean;
  toggleSidebar: () => void;
  toggleSide: () => void;
  /** Shows the sidebar (docked, or as a drawer on a narrow window). */
  showSidebar: () => void;
  /** Shows the side panel (docked, or as a drawer). */
  showSidePanel: () => void;
  /** Closes the sidebar drawer (a session was opened from it). */
  closeSidebarDrawer: () => void;
  closeDrawers: () => void;
};

/** The panels of a workbench; `showSide`: whether the side panel has anything to show. */
export function usePanels(showSide: boolean): Panels {
  const width = useViewportWidth();
  const [sidebarCollapsed, setSidebarCollapsed] = useState(false);
  const [sidebarDrawer, setSidebarDrawer] = useState(false);
  const [sideCollapsed, setSideCollapsed] = useState(false);
  const [sideDrawer, setSideDrawer] = useState(false);
  const showSidebar = useCallback(() => {
    if (window.innerWidth >= SIDEBAR_DOCK_MIN) setSidebarCollapsed(false);
    else setSidebarDrawer(true);
  }, []);
  const showSidePanel = useCallback(() => {
    if (window.innerWidth >= SIDE_DOCK_MIN) setSideCollapsed(false);
    else setSideDrawer(true);
  }, []);
  const closeSidebarDrawer = useCallback(() => setSidebarDrawer(false), []);
  const closeDrawers = useCallback(() => {
    setSidebarDrawer(false);
    setSideDrawer(false);
  }, []);
  return {
    sidebarAt: panelPlace(width, SIDEBAR_DOCK_MIN, sidebarCollapsed, sidebarDrawer),
    sideAt: showSide ? panelPlace(width, SIDE_DOCK_MIN, sideCollapsed, sideDrawer) : "hidden",
    compact: width < HEADER_COMPACT_MAX,
    toggleSidebar: () => (width >= SIDEBAR_DOCK_MIN ? setSidebarCollapsed((v) => !v) : setSidebarDrawer((v) => !v)),
    toggleSide: () => (width >= SIDE_DOCK_MIN ? setSideCollapsed((v) => !v) : setSideDrawer((v) => !v)),
    showSidebar,
    showSidePanel,
    closeSidebarDrawer,
    closeDrawers,
  };
}
