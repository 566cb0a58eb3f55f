// Run by deploy/helm/check.sh on the manifest the chart rendered with its own values: each
// Deployment's pool size (DB_POOL_MAX, EVIDENCE_DB_POOL_MAX) is the one test/support/chart-values.ts
// derives from the same values, which the replica run (test/replicas/run.ts) starts with.
//   node --import tsx test/deploy/rendered-pools.ts <rendered.yaml>

import { readFileSync } from "node:fs";
import { chartValues, components, connectionBudget } from "../support/chart-values.ts";

/** Pool variables per component of a rendered manifest's Deployments. */
export function renderedPools(manifest: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const doc of manifest.split(/^---\s*$/m)) {
    if (!/^kind: Deployment$/m.test(doc)) continue;
    const component = /app\.kubernetes\.io\/component: (\S+)/.exec(doc)?.[1];
    if (!component) continue;
    const vars: Record<string, number> = {};
    for (const m of doc.matchAll(/- name: ((?:EVIDENCE_)?DB_POOL_MAX)\n\s+value: "(\d+)"/g)) vars[m[1]] = Number(m[2]);
    out[component] = vars;
  }
  return out;
}

/** What the chart should have rendered: each component's pool under each of its variables. */
export function expectedPools(): Record<string, Record<string, number>> {
  const values = chartValues();
  const budget = connectionBudget(values);
  return Object.fromEntries(
    components(values)
      .filter((c) => c.enabled)
      .map((c) => [
        c.name,
        Object.fromEntries(
          budget.pools[c.name] === undefined ? [] : c.database.poolEnv.map((v) => [v, budget.pools[c.name]]),
        ),
      ]),
  );
}

if (process.argv[2]) {
  const rendered = renderedPools(readFileSync(process.argv[2], "utf8"));
  const expected = expectedPools();
  const wrong = Object.keys({ ...rendered, ...expected }).filter(
    (c) => JSON.stringify(rendered[c] ?? null) !== JSON.stringify(expected[c] ?? null),
  );
  for (const c of wrong)
    console.error(
      `pools of ${c}: rendered ${JSON.stringify(rendered[c])}, test/support/chart-values.ts ${JSON.stringify(expected[c])}`,
    );
  if (wrong.length) process.exit(1);
  console.log(`pools as rendered = as derived by test/support/chart-values.ts: ${JSON.stringify(expected)}`);
}
