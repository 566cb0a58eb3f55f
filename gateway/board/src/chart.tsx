import type { ComponentChildren } from "preact";

// Charts in plain SVG, no library: bars only, drawn from the same figures as the table
// beside them. The table is what assistive technology reads (the chart is aria-hidden),
// and what the eye checks exact values against. Colours come from classes (the page's
// CSP forbids style attributes).

export interface Bar {
  label: string;
  value: number;
  /** The same figure in the window before, drawn beside it. */
  previous?: number;
}

/** Vertical bars for a series in order (days, hours): first and last labels under it. */
export function Columns({ bars }: { bars: Bar[] }) {
  const max = Math.max(1, ...bars.map((b) => b.value));
  const w = 10;
  return (
    <div class="chart" aria-hidden="true">
      <svg viewBox={`0 0 ${bars.length * w} 100`} preserveAspectRatio="none" class="columns">
        {bars.map((b, i) => {
          const h = (b.value / max) * 96;
          return <rect key={b.label} x={i * w + 1} y={100 - h} width={w - 2} height={h} />;
        })}
      </svg>
      <div class="axis">
        <span>{bars[0]?.label}</span>
        <span>{bars.length > 1 ? bars[bars.length - 1]!.label : ""}</span>
      </div>
    </div>
  );
}

/**
 * Horizontal bars for categories (statuses, agents, weekdays), the label and value written
 * in; a long label is shortened (the table beside has it whole).
 */
export function Rows({ bars, format = String }: { bars: Bar[]; format?: (n: number) => string }) {
  const max = Math.max(1, ...bars.flatMap((b) => [b.value, b.previous ?? 0]));
  const row = 22;
  const paired = bars.some((b) => b.previous !== undefined);
  const step = paired ? row + 8 : row;
  return (
    <div class="chart" aria-hidden="true">
      <svg viewBox={`0 0 400 ${bars.length * step}`} class="rows">
        {bars.map((b, i) => (
          <g key={b.label} transform={`translate(0 ${i * step})`}>
            <text x="0" y="15">
              {b.label.length > 22 ? `${b.label.slice(0, 21)}…` : b.label}
            </text>
            <rect x="130" y={paired ? 2 : 4} width={(b.value / max) * 180} height={paired ? 12 : 14} />
            {paired && <rect class="prev" x="130" y="16" width={((b.previous ?? 0) / max) * 180} height="8" />}
            <text x={134 + (b.value / max) * 180} y="14">
              {format(b.value)}
            </text>
          </g>
        ))}
      </svg>
    </div>
  );
}

/** A chart and its table, under one visible title. */
export function Figure(props: { title: string; children: ComponentChildren }) {
  return (
    <figure class="figure">
      <figcaption>{props.title}</figcaption>
      {props.children}
    </figure>
  );
}
