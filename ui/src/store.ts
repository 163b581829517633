// A minimal external store for `useSyncExternalStore`: state that lives outside React (fed by
// IPC channels and timers) and that components read without owning.
import { useSyncExternalStore } from "react";

/** A value with subscribers; `set` notifies them when it changed (by identity). */
export class Store<T> {
  private value: T;
  private readonly listeners = new Set<() => void>();

  constructor(initial: T) {
    this.value = initial;
  }

  /** The current value (stable between changes, as `useSyncExternalStore` needs). */
  readonly get = (): T => this.value;

  /** Calls `listener` after every change; returns the unsubscribe. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** Replaces the value and notifies the subscribers (nothing when it is the same). */
  set(next: T): void {
    if (Object.is(next, this.value)) return;
    this.value = next;
    for (const l of [...this.listeners]) l();
  }

  /** How many subscribers it has (tests; the clock starts its timer on the first). */
  get subscribers(): number {
    return this.listeners.size;
  }
}

/** Reads a store in a component, re-rendering on its changes. */
export function useStore<T>(store: Store<T>): T {
  return useSyncExternalStore(store.subscribe, store.get);
}

/**
 * Reads the part `select` picks of a store, re-rendering only when that part changed (by
 * identity): `select` must return a value kept between changes that do not touch it.
 */
export function useStoreSelect<T, U>(store: Store<T>, select: (value: T) => U): U {
  return useSyncExternalStore(store.subscribe, () => select(store.get()));
}

/** How often relative times ("3 minutes ago") are recomputed. */
export const TICK_MS = 30_000;

/**
 * The one shared clock every relative time reads: a single timer ticking every
 * [`TICK_MS`] while anything shows a time, stopped when nothing does.
 */
export class Clock {
  private now = Date.now();
  private timer: ReturnType<typeof setInterval> | null = null;
  private readonly listeners = new Set<() => void>();

  /** The time of the last tick (ms since the epoch). */
  readonly get = (): number => this.now;

  /** Subscribes; the first subscriber starts the timer, the last one out stops it. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (this.timer === null) {
      this.now = Date.now();
      this.timer = setInterval(() => this.tick(), TICK_MS);
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer !== null) {
        clearInterval(this.timer);
        this.timer = null;
      }
    };
  };

  /** Whether the timer runs (tests). */
  get running(): boolean {
    return this.timer !== null;
  }

  private tick() {
    this.now = Date.now();
    for (const l of [...this.listeners]) l();
  }
}

/** The app's clock. */
export const clock = new Clock();

/** The shared clock's time in a component, re-rendered at each tick. */
export function useNow(): number {
  return useSyncExternalStore(clock.subscribe, clock.get);
}
