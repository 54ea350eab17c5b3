// Small inline SVG icons: they draw the same on every machine (the media-control characters
// are missing from many fonts and showed as empty boxes).
const PATHS = {
  back: "M6 5h2v14H6zM20 5v14L9 12z",
  play: "M7 4v16l13-8z",
  pause: "M6 5h4v14H6zM14 5h4v14h-4z",
  forward: "M16 5h2v14h-2zM4 5v14l11-7z",
};

export type IconName = keyof typeof PATHS;

export function Icon({ name, size = 16 }: { name: IconName; size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" aria-hidden="true" focusable="false" className="icon">
      <path d={PATHS[name]} fill="currentColor" />
    </svg>
  );
}
