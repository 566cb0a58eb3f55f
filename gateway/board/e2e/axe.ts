// The axe scan of the board's end-to-end tests: zero serious or critical violations.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import { expect } from "vitest";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** Zero serious or critical axe violations on what the page shows now. */
export async function axeScan(p: Page, what: string): Promise<void> {
  // Evaluated over the DevTools protocol: the page's CSP (no inline script) does not apply.
  await p.evaluate(AXE_SOURCE);
  const violations = await p.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, help: v.help }));
  });
  const blocking = violations.filter((v: { impact: string }) => v.impact === "serious" || v.impact === "critical");
  expect(blocking, `axe on ${what}`).toEqual([]);
}
