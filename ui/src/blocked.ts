// Why a new session could not run a turn yet, read from the settings before the session
// exists (the session's own `blocked` says it afterwards).
import type { SettingsView } from "./bindings/app/SettingsView";

/** The reason, in words with what to do, or null when a turn can run. */
export function preBlocked(s: SettingsView): string | null {
  if (s.model.trim() === "") return "No model is chosen: pick one in Settings.";
  const provider = s.providers.find((x) => x.id === s.provider);
  if (provider === undefined || !provider.needsKey) return null;
  if (provider.key.state === "missing") {
    return `No API key is set for ${provider.label}: add one in Settings (it is kept in the OS keyring).`;
  }
  if (provider.key.state === "unavailable") return `The OS keyring is not available (${provider.key.reason}).`;
  return null;
}
