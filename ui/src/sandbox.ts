// The header's sandbox pill: whether a session's commands run inside the OS sandbox.
import type { SandboxView } from "./bindings/app/SandboxView";
import type { MessageKey } from "./i18n";

/** The label of a session's sandbox state (`on`, `off`, `unavailable`). */
export function sandboxLabel(view: SandboxView): MessageKey {
  switch (view.state) {
    case "on":
      return "sandbox.on";
    case "off":
      return "sandbox.off";
    default:
      return "sandbox.unavailable";
  }
}

/** Whether the state is one the user should notice: commands are not confined. */
export function sandboxWarns(view: SandboxView): boolean {
  return view.state !== "on";
}

/** The pill's hover text: what the state means, then each layer, active (✓) or not (✗),
 *  with what it does or why it is not active. */
export function sandboxTip(view: SandboxView): string {
  const layers = view.layers.map((l) => `${l.active ? "✓" : "✗"} ${l.name}: ${l.detail}`);
  return [view.detail, ...layers].join("\n");
}
