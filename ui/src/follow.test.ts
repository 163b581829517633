import { describe, expect, it } from "vitest";
import { Follow, INTENT_MS, STICK_PX } from "./follow";

describe("Follow", () => {
  it("starts pinned", () => {
    expect(new Follow().pinned).toBe(true);
  });

  it("stays pinned when layout or code scrolls the view away from the bottom", () => {
    const f = new Follow();
    // A row measured taller than estimated, a panel opening, a scroll landing short.
    f.scrolled(STICK_PX * 10, 1000);
    f.scrolled(5000, 2000);
    expect(f.pinned).toBe(true);
  });

  it("unpins when the user scrolls up with the wheel, a key or touch", () => {
    const f = new Follow();
    f.intent(1000);
    f.scrolled(400, 1000 + INTENT_MS - 1);
    expect(f.pinned).toBe(false);
  });

  it("an old gesture does not count for a later scroll", () => {
    const f = new Follow();
    f.intent(1000);
    f.scrolled(400, 1000 + INTENT_MS + 1);
    expect(f.pinned).toBe(true);
  });

  it("unpins while the pointer drags (the scrollbar, a selection) and not after", () => {
    const f = new Follow();
    f.press(true);
    f.scrolled(400, 5000);
    expect(f.pinned).toBe(false);
    f.press(false);
    f.scrolled(0, 9000);
    expect(f.pinned).toBe(true);
    f.scrolled(400, 9500);
    expect(f.pinned).toBe(true);
  });

  it("a scroll within the stick distance of the bottom pins again, however it happened", () => {
    const f = new Follow();
    f.intent(0);
    f.scrolled(1000, 10);
    expect(f.pinned).toBe(false);
    f.scrolled(STICK_PX - 1, 5000);
    expect(f.pinned).toBe(true);
    f.intent(6000);
    f.scrolled(STICK_PX, 6001);
    expect(f.pinned).toBe(false);
  });
});
