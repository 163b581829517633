/**
 * Toolbar icons drawn as inline SVG: glyphs such as ⧉ or 🗑 are missing from many Linux
 * font sets and render as empty boxes. Stroke icons in currentColor follow the button's
 * colour and hover state.
 */
type IconName = "terminal" | "files" | "newWindow" | "usage" | "settings" | "help" | "trash" | "sidebar" | "panel" | "more";

const PATHS: Record<IconName, string[]> = {
  terminal: ["M4 6l5 5-5 5", "M11 17h7"],
  files: ["M8 6h11", "M8 12h11", "M8 18h11", "M4 6h.01", "M4 12h.01", "M4 18h.01"],
  newWindow: ["M8 8h11v11H8z", "M5 16V5h11"],
  usage: ["M5 19V11", "M10 19V5", "M15 19v-6", "M20 19V9", "M3 19h19"],
  settings: ["M4 7h10", "M18 7h2", "M4 17h4", "M12 17h8", "M14 5v4", "M8 15v4"],
  help: ["M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z", "M9.5 9.5a2.5 2.5 0 1 1 3.5 2.3c-.6.3-1 .8-1 1.5v.7", "M12 17h.01"],
  trash: ["M4 7h16", "M10 11v6", "M14 11v6", "M6 7l1 13h10l1-13", "M9 7V4h6v3"],
  sidebar: ["M4 5h16v14H4z", "M9 5v14"],
  panel: ["M4 5h16v14H4z", "M15 5v14"],
  more: ["M5 12h.01", "M12 12h.01", "M19 12h.01"],
};

/** One toolbar icon, 16 px, in the current text colour. */
export function Icon({ name }: { name: IconName }) {
  return (
    <svg
      className="icon"
      width="16"
      height="16"
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth="2"
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
      data-icon={name}
    >
      {PATHS[name].map((d) => (
        <path key={d} d={d} />
      ))}
    </svg>
  );
}
