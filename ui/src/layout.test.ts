import { describe, expect, it } from "vitest";
import { panelPlace, SIDEBAR_DOCK_MIN } from "./layout";

describe("panelPlace", () => {
  it("docks a panel on a wide window unless the user collapsed it", () => {
    expect(panelPlace(1280, SIDEBAR_DOCK_MIN, false, false)).toBe("docked");
    expect(panelPlace(1280, SIDEBAR_DOCK_MIN, true, false)).toBe("hidden");
  });

  it("turns it into a drawer the user opens on a narrow window", () => {
    expect(panelPlace(800, SIDEBAR_DOCK_MIN, false, false)).toBe("hidden");
    expect(panelPlace(800, SIDEBAR_DOCK_MIN, false, true)).toBe("drawer");
    expect(panelPlace(SIDEBAR_DOCK_MIN - 1, SIDEBAR_DOCK_MIN, true, true)).toBe("drawer");
    expect(panelPlace(SIDEBAR_DOCK_MIN, SIDEBAR_DOCK_MIN, false, true)).toBe("docked");
  });
});
