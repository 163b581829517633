// A terminal's input in typed order. A paste waits for the clipboard's text (an IPC call);
// keystrokes typed meanwhile wait behind it, so a fast Enter cannot overtake the pasted line.

type Item = { kind: "text"; data: string } | { kind: "paste"; ready: boolean; apply: () => void };

/** Input for one terminal: `type` for xterm's data events, `paste` for a clipboard paste. */
export interface OrderedInput {
  /** Sends typed data now, or after the pastes started before it. */
  type: (data: string) => void;
  /** Pastes `text` once it arrives (through `apply`, whose data events go straight out). */
  paste: (text: Promise<string>, apply: (text: string) => void, fail: (e: unknown) => void) => void;
}

/** Orders a terminal's typed data and pastes before they reach `send`. */
export function orderedInput(send: (data: string) => void): OrderedInput {
  const queue: Item[] = [];
  let applying = false;
  const drain = () => {
    for (let head = queue[0]; head !== undefined; head = queue[0]) {
      if (head.kind === "paste" && !head.ready) return;
      queue.shift();
      if (head.kind === "text") {
        send(head.data);
      } else {
        applying = true;
        try {
          head.apply();
        } finally {
          applying = false;
        }
      }
    }
  };
  return {
    type: (data) => {
      if (applying || queue.length === 0) send(data);
      else queue.push({ kind: "text", data });
    },
    paste: (text, apply, fail) => {
      const item: Item = { kind: "paste", ready: false, apply: () => undefined };
      queue.push(item);
      text
        .then(
          (t) => {
            item.apply = () => apply(t);
          },
          (e: unknown) => {
            item.apply = () => fail(e);
          },
        )
        .finally(() => {
          item.ready = true;
          drain();
        });
    },
  };
}

/** The parts of a key press type-ahead looks at. */
export type KeyPress = { key: string; ctrlKey: boolean; altKey: boolean; metaKey: boolean };

/**
 * Keys typed after Ctrl+` showed the terminal panel but before its terminal was ready (the
 * panel loads, the shell starts): kept in order and handed to the terminal once it exists,
 * so the first command typed is not lost.
 */
export class TypeAhead {
  private data = "";

  /** Keeps a key press; false for keys it does not keep (shortcuts, arrows, function keys). */
  key(e: KeyPress): boolean {
    if (e.ctrlKey || e.altKey || e.metaKey) return false;
    if (e.key === "Enter") this.data += "\r";
    else if (e.key === "Tab") this.data += "\t";
    else if (e.key === "Backspace") this.data = [...this.data].slice(0, -1).join("");
    else if ([...e.key].length === 1) this.data += e.key;
    else return false;
    return true;
  }

  /** What was typed so far; the buffer is empty afterwards. */
  take(): string {
    const out = this.data;
    this.data = "";
    return out;
  }
}
