/** The Cairn mark, drawn like the app icon: stacked stones on a dark tile (inline SVG). */
export function StoneMark({ size = 24 }: { size?: number }) {
  return (
    <svg
      className="stone-mark"
      width={size}
      height={size}
      viewBox="2 2 28 28"
      aria-hidden="true"
      focusable="false"
    >
      <rect x="2" y="2" width="28" height="28" rx="6.25" fill="#1f2a37" />
      <ellipse cx="16" cy="23.2" rx="9.06" ry="3.38" fill="#e9e4d8" />
      <ellipse cx="16" cy="17.1" rx="6.88" ry="2.88" fill="#cfc6b3" />
      <ellipse cx="16" cy="12" rx="4.69" ry="2.38" fill="#b3a78f" />
      <ellipse cx="16" cy="8.06" rx="2.75" ry="1.69" fill="#e3a44b" />
    </svg>
  );
}
