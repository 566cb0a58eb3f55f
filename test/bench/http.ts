// Shared by the benchmarks: a keep-alive HTTP client measuring each call, a bounded
// pool, percentiles, closed-loop saturation and child processes printing a JSON line.
import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------------------------------
// HTTP client: keep-alive sockets, latency measured from send to the end of the body.

let agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function closeConnections(): void {
  agent.destroy();
}

/** Most sockets open at once to one server. */
export function setConnections(n: number): void {
  agent = new http.Agent({ keepAlive: true, maxSockets: n });
}

export interface Reply {
  status: number;
  body: any;
  ms: number;
}

export function call(
  base: string,
  method: string,
  p: string,
  headers: Record<string, string> = {},
  body?: unknown,
  /** Gives up after this long: status 0, as for a refused connection. */
  timeoutMs?: number,
): Promise<Reply> {
  return new Promise((resolve) => {
    const started = performance.now();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      base + p,
      {
        method,
        agent,
        headers: {
          ...headers,
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString();
          let parsed: unknown = undefined;
          if (text) {
            try {
              parsed = JSON.parse(text);
            } catch {
              parsed = text;
            }
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, ms: performance.now() - started });
        });
      },
    );
    req.on("error", (err) => resolve({ status: 0, body: String(err), ms: performance.now() - started }));
    if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    if (payload) req.write(payload);
    req.end();
  });
}

export async function pool<T>(
  items: T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i], i);
      }
    }),
  );
}

export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * How far the ratio of two samples' p-th percentiles can be trusted: the 5th and 95th
 * percentiles of that ratio over `resamples` bootstrap resamples of each sample (drawn with
 * replacement, as many as it holds), a 90 % interval. A p95 of 200 calls is their tenth slowest,
 * and a few calls slowed by whatever else ran move it; where the interval holds 1.5, the run
 * cannot say on which side of the goal the path is. Seeded, so that a run's figures are
 * reproducible from its samples.
 */
export function percentileRatioInterval(
  a: number[],
  b: number[],
  p: number,
  resamples = 2000,
  seed = 1,
): [number, number] {
  if (a.length === 0 || b.length === 0) return [NaN, NaN];
  // mulberry32: a small seeded generator, enough to draw indexes.
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const drawn = (xs: number[]) => {
    const out = new Float64Array(xs.length);
    for (let i = 0; i < xs.length; i++) out[i] = xs[Math.floor(random() * xs.length)];
    return percentile(out.sort(), p);
  };
  const ratios = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) ratios[r] = drawn(a) / drawn(b);
  ratios.sort();
  return [percentile(ratios, 5), percentile(ratios, 95)];
}

// ---------------------------------------------------------------------------------------
// Child processes

export function startChild(script: string, env: Record<string, string>): Promise<{ child: ChildProcess; line: any }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(here, script)], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const errors: string[] = [];
    child.stderr!.on("data", (d: Buffer) => {
      errors.push(d.toString());
      if (errors.length > 50) errors.shift();
    });
    const lines = readline.createInterface({ input: child.stdout! });
    lines.once("line", (line) => resolve({ child, line: JSON.parse(line) }));
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}:\n${errors.join("").slice(-3000)}`)));
  });
}

// ---------------------------------------------------------------------------------------
// Closed-loop saturation (the reference, and the poll capacity)

export async function saturate(
  durationS: number,
  concurrency: number,
  one: (i: number) => Promise<Reply>,
): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const until = performance.now() + durationS * 1000;
  const latencies: number[] = [];
  let errors = 0;
  let counter = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const r = await one(counter++);
        latencies.push(r.ms);
        if (r.status >= 300 && r.status !== 204) errors += 1;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / durationS, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

/**
 * The goal's reference for a path: the database without the months that answers the rows the
 * history answers (docs/decisions/history.md, "The goal's reference: the same rows without the
 * months"). The empty database when its answer holds what the history's holds (a single object,
 * or a page as full); else the small history when its page is the history's (yesterday's
 * operations, a day's balance chain, the fleet's 100 SIMs: pages the empty database cannot
 * fill); else, where neither holds the history's rows, the empty database, as the issue wrote it.
 * `rows`: the answer's rows on the empty database, the small history and the history.
 */
export function referenceOf(rows: (number | undefined)[]): "empty" | "small" {
  const [empty, small, history] = rows;
  if (history === undefined || empty === history) return "empty";
  return small === history ? "small" : "empty";
}

/** A path's figures: its p95 and p50 on each side, the ratios of the p95s and their intervals, its rows. */
export interface Figure {
  empty_p95_ms: number;
  history_p95_ms: number;
  ratio: number;
  empty_p50_ms: number;
  history_p50_ms: number;
  empty_rows?: number;
  history_rows?: number;
  small_p95_ms?: number;
  small_p50_ms?: number;
  small_rows?: number;
  ratio_to_small?: number;
  /** The 90 % bootstrap interval of the ratio of the p95s (percentileRatioInterval). */
  ratio_interval: [number, number];
  ratio_to_small_interval?: [number, number];
  /** The goal's reference for this path (referenceOf). */
  reference: "empty" | "small";
}

/**
 * Each path's p95 against its reference's: how many within 1.5, which are above it beyond the
 * run's doubt (the ratio's 90 % interval above 1.5), how many the run cannot place, and the p50s.
 * `against`: judge every path against that side instead of its own reference (the paths the
 * small history did not measure left out).
 */
export function goalOf(
  figures: Record<
    string,
    Pick<
      Figure,
      | "reference"
      | "ratio"
      | "ratio_interval"
      | "ratio_to_small"
      | "ratio_to_small_interval"
      | "history_p50_ms"
      | "empty_p50_ms"
      | "small_p50_ms"
    >
  >,
  against?: "empty" | "small",
) {
  const judged = Object.entries(figures)
    .filter(([, x]) => against !== "small" || x.ratio_to_small !== undefined)
    .map(([name, x]) =>
      (against ?? x.reference) === "small"
        ? {
            name,
            ratio: x.ratio_to_small!,
            interval: x.ratio_to_small_interval!,
            p50: x.history_p50_ms / x.small_p50_ms!,
          }
        : { name, ratio: x.ratio, interval: x.ratio_interval, p50: x.history_p50_ms / x.empty_p50_ms },
    );
  return {
    of: judged.length,
    within: judged.filter((x) => x.ratio <= 1.5).length,
    at_p50: judged.filter((x) => x.p50 <= 1.5).length,
    outside: judged.filter((x) => x.ratio > 1.5).map((x) => `${x.name} (${x.ratio.toFixed(2)})`),
    above: judged.filter((x) => x.interval[0] > 1.5).map((x) => x.name),
    undecided: judged.filter((x) => x.interval[0] <= 1.5 && x.interval[1] > 1.5).map((x) => x.name),
  };
}
