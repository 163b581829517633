// `/command` completion in the composer: whether the caret is in a command name at the very
// start of the prompt, ranking the workspace's commands against it, and the text after a
// pick. Pure functions (the list is in components/SlashCommands.tsx); whether a sent prompt is
// a command is decided by the backend, which knows the commands.
import type { CommandView } from "./bindings/app/CommandView";
import type { MessageKey } from "./i18n";

/** How lists name where a command, skill or hook comes from. */
export const SOURCE_KEY: Record<CommandView["source"], MessageKey> = {
  "built-in": "commands.builtin",
  project: "commands.project",
  user: "commands.user",
  mcp: "commands.mcp",
};

/** The command name being typed at `caret` (without the `/`), or null. */
export function slashAt(text: string, caret: number): string | null {
  if (!text.startsWith("/") || text.startsWith("//")) return null;
  const end = text.search(/\s/);
  const nameEnd = end < 0 ? text.length : end;
  if (caret < 1 || caret > nameEnd) return null;
  return text.slice(1, nameEnd);
}

/** The commands for `query`: name prefix first (built-ins before others), then substring. */
export function rankCommands(commands: CommandView[], query: string, limit = 10): CommandView[] {
  const q = query.toLowerCase();
  const rank = (c: CommandView): number => {
    const n = c.name.toLowerCase();
    if (n.startsWith(q)) return 0;
    if (n.includes(q)) return 1;
    if (c.description.toLowerCase().includes(q)) return 2;
    return -1;
  };
  return commands
    .map((c, i) => ({ c, r: rank(c), i }))
    .filter((x) => x.r >= 0)
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .slice(0, limit)
    .map((x) => x.c);
}

/** `text` with its command name replaced by `name` and a space after it; the new caret. */
export function pickCommand(text: string, name: string): { text: string; caret: number } {
  const rest = text.replace(/^\/\S*/, "").replace(/^ /, "");
  const head = `/${name} `;
  return { text: head + rest, caret: head.length };
}
