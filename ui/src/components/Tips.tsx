// Hover hints for every element with a `data-tip`, drawn by the page. The toolkit's native
// tooltip (the `title` attribute) stays on screen in WebKitGTK when the element under a still
// pointer goes away (Stop after it was pressed) and covers what a click opened (the Auto
// confirmation); this one hides on any click, key or wheel, and as soon as its element is gone,
// moved or covered, and comes back only when the pointer enters an element again.
import { useEffect, useLayoutEffect, useRef, useState } from "react";

/** How long the pointer rests on an element before its hint shows. */
export const TIP_DELAY_MS = 500;
/** Room kept between a hint and the window's edges. */
const EDGE = 6;

type Shown = { text: string; x: number; top: number; bottom: number };

/** Whether the point lies on `el` or something inside it (not on something covering it). */
function under(el: Element, x: number, y: number): boolean {
  if (typeof document.elementFromPoint !== "function") return true;
  const at = document.elementFromPoint(x, y);
  return at !== null && el.contains(at);
}

/** The page's one hint layer; mounted once at the root. */
export function Tips() {
  const [shown, setShown] = useState<Shown | null>(null);
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    let target: HTMLElement | null = null;
    // The element a click or key dismissed: no hint for it until the pointer leaves it.
    let dismissed: Element | null = null;
    let timer: number | undefined;
    let frame: number | undefined;
    let pointer = { x: -1, y: -1 };
    const stop = () => {
      window.clearTimeout(timer);
      if (frame !== undefined) window.cancelAnimationFrame(frame);
      timer = undefined;
      frame = undefined;
    };
    const hide = () => {
      stop();
      target = null;
      setShown(null);
    };
    const dismiss = () => {
      if (target !== null) dismissed = target;
      hide();
    };
    // While a hint shows, every frame checks that its element is still there and on top.
    const watch = () => {
      frame = window.requestAnimationFrame(() => {
        const el = target;
        if (el === null) return;
        if (!el.isConnected || !el.dataset.tip || !under(el, pointer.x, pointer.y)) {
          hide();
          return;
        }
        watch();
      });
    };
    const show = (el: HTMLElement) => {
      const text = el.dataset.tip;
      if (!text || !el.isConnected || !under(el, pointer.x, pointer.y)) return;
      const r = el.getBoundingClientRect();
      setShown({ text, x: r.left + r.width / 2, top: r.top, bottom: r.bottom });
      watch();
    };
    const over = (e: PointerEvent) => {
      pointer = { x: e.clientX, y: e.clientY };
      const el = e.target instanceof Element ? e.target.closest<HTMLElement>("[data-tip]") : null;
      if (dismissed !== null && el !== dismissed) dismissed = null;
      if (el === target) return;
      hide();
      if (el === null || el === dismissed) return;
      target = el;
      timer = window.setTimeout(() => show(el), TIP_DELAY_MS);
    };
    const move = (e: PointerEvent) => {
      pointer = { x: e.clientX, y: e.clientY };
    };
    const leave = (e: PointerEvent) => {
      if (e.relatedTarget === null) {
        dismissed = null;
        hide();
      }
    };
    const opts = { capture: true, passive: true } as const;
    const listeners: [string, (e: PointerEvent) => void][] = [
      ["pointerover", over],
      ["pointermove", move],
      ["pointerout", leave],
      ["pointerdown", dismiss],
      ["keydown", dismiss],
      ["wheel", dismiss],
      ["blur", dismiss],
    ];
    for (const [type, f] of listeners) window.addEventListener(type, f as EventListener, opts);
    return () => {
      stop();
      for (const [type, f] of listeners) window.removeEventListener(type, f as EventListener, opts);
    };
  }, []);

  // Below the element, or above it when there is no room; kept inside the window.
  useLayoutEffect(() => {
    const el = box.current;
    if (el === null || shown === null) return;
    const w = el.offsetWidth;
    const h = el.offsetHeight;
    const left = Math.min(Math.max(EDGE, shown.x - w / 2), Math.max(EDGE, window.innerWidth - w - EDGE));
    const below = shown.bottom + EDGE + h <= window.innerHeight - EDGE;
    el.style.left = `${left}px`;
    el.style.top = `${below ? shown.bottom + EDGE : Math.max(EDGE, shown.top - EDGE - h)}px`;
  }, [shown]);

  if (shown === null) return null;
  return (
    <div className="tip" role="tooltip" data-testid="tip" ref={box}>
      {shown.text}
    </div>
  );
}
