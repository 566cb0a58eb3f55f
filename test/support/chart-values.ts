// The Helm chart's values (deploy/helm/transferops/values.yaml) and its connection budget, as
// the chart computes them (`transferops.dbBudget` in templates/_helpers.tpl): one source of
// truth for what the replica run starts and what the chart's tests check. deploy/helm/check.sh
// compares these pools with the ones the chart renders.

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const VALUES_FILE = path.join(ROOT, "deploy/helm/transferops/values.yaml");

type Scalar = string | number | boolean;
export interface Tree {
  [key: string]: Scalar | Tree;
}

/**
 * The maps and scalars of a values file (block lists are left out, flow lists kept as their
 * text): enough for the chart's own values, not a YAML parser.
 */
export function parseValues(text: string): Tree {
  const root: Tree = {};
  const stack: { indent: number; node: Tree }[] = [{ indent: -1, node: root }];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+#.*$/, "");
    const m = /^( *)([A-Za-z_][\w.-]*):(?:\s+(.*))?$/.exec(line);
    if (!m || /^\s*#/.test(raw)) continue;
    const indent = m[1].length;
    while (stack[stack.length - 1].indent >= indent) stack.pop();
    const parent = stack[stack.length - 1].node;
    const value = m[3]?.trim();
    if (value === undefined || value === "") {
      const child: Tree = {};
      parent[m[2]] = child;
      stack.push({ indent, node: child });
    } else {
      parent[m[2]] = scalar(value);
    }
  }
  return root;
}

function scalar(v: string): Scalar {
  if (/^".*"$|^'.*'$/.test(v)) return v.slice(1, -1);
  if (v === "true" || v === "false") return v === "true";
  if (/^-?\d+$/.test(v)) return Number(v);
  return v;
}

export function chartValues(file = VALUES_FILE): Tree {
  return parseValues(readFileSync(file, "utf8"));
}

/** Values merged over others (later files win), as `helm -f a -f b`. */
export function merge(base: Tree, over: Tree): Tree {
  const out: Tree = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = typeof v === "object" && typeof b === "object" ? merge(b, v) : v;
  }
  return out;
}

const tree = (t: Tree | Scalar | undefined): Tree => (typeof t === "object" ? t : {});
const num = (t: Tree | Scalar | undefined): number => Number(t ?? 0);

export interface Component {
  name: string;
  enabled: boolean;
  replicas: number;
  autoscaling: { enabled: boolean; minReplicas: number; maxReplicas: number };
  database: { pool: number; listen: number; poolEnv: string[] };
}

/** Each component of `services`, over `componentDefaults`, as the chart merges them. */
export function components(values: Tree): Component[] {
  const defaults = tree(values.componentDefaults);
  return Object.entries(tree(values.services)).map(([name, own]) => {
    const c = merge(defaults, tree(own));
    const a = tree(c.autoscaling);
    const d = tree(c.database);
    return {
      name,
      enabled: c.enabled !== false,
      replicas: num(c.replicas),
      autoscaling: { enabled: a.enabled === true, minReplicas: num(a.minReplicas), maxReplicas: num(a.maxReplicas) },
      database: {
        pool: num(d.pool),
        listen: num(d.listen),
        poolEnv: String(d.poolEnv ?? "")
          .replace(/^\[|\]$/g, "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      },
    };
  });
}

/** The replicas a component runs at install (an autoscaled one its minimum). */
export const startReplicas = (c: Component): number => (c.autoscaling.enabled ? c.autoscaling.minReplicas : c.replicas);

export interface Budget {
  /** database.connections */
  connections: number;
  /** Pool size per component with a database. */
  pools: Record<string, number>;
  /** The most processes of each: maximum replicas plus the one a rolling update adds. */
  processes: Record<string, number>;
  /** LISTEN connections and migration locks over every process. */
  listen: number;
  /** The pools over every process (or PgBouncer's server connections). */
  pooled: number;
  total: number;
}

/** The chart's `transferops.dbBudget`: throws where the chart refuses to render. */
export function connectionBudget(values: Tree): Budget {
  const db = tree(values.database);
  const connections = num(db.connections);
  const minPool = num(db.minPool);
  const pgbouncer = tree(db.pgbouncer);
  const processes: Record<string, number> = {};
  const wants: Record<string, number> = {};
  let listen = 0;
  let wanted = 0;
  for (const c of components(values)) {
    if (!c.enabled || c.database.pool <= 0) continue;
    const n = (c.autoscaling.enabled ? c.autoscaling.maxReplicas : c.replicas) + 1;
    processes[c.name] = n;
    wants[c.name] = c.database.pool;
    listen += n * Math.max(1, c.database.listen);
    wanted += n * c.database.pool;
  }
  const pools: Record<string, number> = {};
  let pooled = 0;
  if (pgbouncer.enabled === true) {
    Object.assign(pools, wants);
    pooled = (num(pgbouncer.replicas) + 1) * num(pgbouncer.poolSize);
  } else {
    const room = connections - listen;
    for (const [name, want] of Object.entries(wants).sort(([a], [b]) => a.localeCompare(b))) {
      pools[name] = wanted > room ? Math.max(minPool, Math.floor((want * Math.max(0, room)) / wanted)) : want;
      pooled += processes[name] * pools[name];
    }
  }
  const total = listen + pooled;
  if (total > connections)
    throw new Error(
      `connection budget exceeded: the release may need ${total} connections, database.connections is ${connections}`,
    );
  return { connections, pools, processes, listen, pooled, total };
}
