// Whether a scroll view follows new content at its bottom (the chat transcript).

/** Distance from the bottom (px) within which the view counts as at the bottom. */
export const STICK_PX = 80;
/** How long (ms) after a wheel, touch or key press a scroll counts as the user's own. */
export const INTENT_MS = 600;

/**
 * The follow state of a scroll view. Reaching the bottom (by any means) pins it; only the
 * user's own scrolling away from the bottom unpins it. Scroll events that layout causes (rows
 * measured taller than estimated, a panel opening, a programmatic scroll landing short) never
 * unpin it, so the view cannot get stuck above new content because of a timing race.
 */
export class Follow {
  /** Whether new content scrolls the view to the bottom. */
  pinned = true;
  private lastIntent = Number.NEGATIVE_INFINITY;
  private pressed = false;

  /** The user turned the wheel, touched or pressed a key in the view at `now` (ms). */
  intent(now: number): void {
    this.lastIntent = now;
  }

  /** The pointer went down in the view (a scrollbar drag or a selection) or came up. */
  press(down: boolean): void {
    this.pressed = down;
  }

  /** The view scrolled and now ends `distance` px above its bottom, at `now` (ms). */
  scrolled(distance: number, now: number): void {
    if (distance < STICK_PX) this.pinned = true;
    else if (this.pressed || now - this.lastIntent < INTENT_MS) this.pinned = false;
  }
}
