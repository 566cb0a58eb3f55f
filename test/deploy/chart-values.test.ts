// The Helm chart's values agree with the code they deploy: every service a component calls
// lets that component in through its network policy, and every topic the code publishes to is
// created by the topics job. A cluster that enforces network policies, or a broker that does
// not create topics on first use, would otherwise break in production and nowhere else.

import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Topics } from "@transferops/kit";
import { chartValues, components, connectionBudget, merge, parseValues } from "../support/chart-values.ts";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const VALUES = readFileSync(path.join(ROOT, "deploy/helm/transferops/values.yaml"), "utf8");
const SERVICES = ["fleet", "dispatch", "evidence", "intake", "analytics", "messaging"] as const;

/** The lines of a top-level block of values.yaml (`services:`, `kafkaTopics:`). */
function block(name: string): string[] {
  const lines = VALUES.split("\n");
  const from = lines.indexOf(`${name}:`);
  const to = lines.findIndex((l, i) => i > from && /^[a-zA-Z]/.test(l));
  return lines.slice(from + 1, to);
}

/** `services.<name>.callers` of the chart. */
function callersOf(service: string): string[] {
  const lines = block("services");
  const from = lines.indexOf(`  ${service}:`);
  const to = lines.findIndex((l, i) => i > from && /^ {2}[a-z]/.test(l));
  const line = lines.slice(from + 1, to === -1 ? undefined : to).find((l) => /^ {4}callers:/.test(l));
  return line
    ? line
        .replace(/^ {4}callers:\s*\[(.*)\].*$/, "$1")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [];
}

/** The services whose address (`<NAME>_URL`) a service's own code (tests aside) reads. */
function calledBy(service: string): string[] {
  const called = new Set<string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "gen") walk(p);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) {
        for (const m of readFileSync(p, "utf8").matchAll(
          /\b(FLEET|DISPATCH|EVIDENCE|INTAKE|ANALYTICS|MESSAGING)_URL\b/g,
        ))
          called.add(m[1].toLowerCase());
      }
    }
  };
  walk(path.join(ROOT, "services", service, "src"));
  called.delete(service);
  return [...called].sort();
}

describe("the chart's network policies", () => {
  for (const service of SERVICES) {
    it(`let every component that calls ${service} reach it`, () => {
      const callers = callersOf(service);
      const needed = SERVICES.filter((caller) => calledBy(caller).includes(service));
      expect(needed.filter((c) => !callers.includes(c))).toEqual([]);
    });
  }
});

describe("the chart's topics job", () => {
  it("creates every topic the services publish to", () => {
    const lines = block("kafkaTopics");
    const from = lines.indexOf("  topics:");
    const created = lines
      .slice(from + 1)
      .filter((l) => /^ {4}[a-z]+:/.test(l))
      .map((l) => l.trim().replace(/:$/, ""));
    expect(Object.values(Topics).filter((t) => !created.includes(t))).toEqual([]);
  });
});

/** The services' own code (tests and generated code aside), file by file. */
function sources(service: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== "gen") walk(p);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) out.push(readFileSync(p, "utf8"));
    }
  };
  walk(path.join(ROOT, "services", service, "src"));
  return out;
}

describe("the chart's connection budget", () => {
  const values = chartValues();
  const byName = new Map(components(values).map((c) => [c.name, c]));

  for (const service of SERVICES) {
    it(`counts each LISTEN connection a ${service} process holds`, () => {
      const code = sources(service);
      // The kit's outbox relay LISTENs in every service that publishes; each Announcements
      // (kit/announcements.ts) LISTENs on a channel of its own.
      const relay = code.some((s) => /publishes:\s*false/.test(s)) ? 0 : 1;
      const announcements = code.reduce((n, s) => n + (s.match(/new Announcements\(/g)?.length ?? 0), 0);
      expect(byName.get(service)?.database.listen).toBe(relay + announcements);
    });

    it(`sets ${service}'s pool through the variable its code reads`, () => {
      const read = new Set(
        sources(service).flatMap((s) => [...s.matchAll(/\b([A-Z_]*DB_POOL_MAX)\s*:/g)].map((m) => m[1])),
      );
      // A service whose configuration names no pool variable gets the kit's (DB_POOL_MAX).
      expect(byName.get(service)?.database.poolEnv).toEqual(read.size ? [...read] : ["DB_POOL_MAX"]);
    });
  }

  it("gives the gateway, which has no database, no pool", () => {
    expect(byName.get("gateway")?.database.pool).toBe(0);
  });

  it("fits its defaults into a stock PostgreSQL's 100 connections, pools at the maximum replicas", () => {
    const budget = connectionBudget(values);
    // 100 less 3 for superusers, room for operators' sessions and the migrations Job.
    expect(budget.connections).toBeLessThanOrEqual(90);
    expect(budget.total).toBeLessThanOrEqual(budget.connections);
    for (const [name, pool] of Object.entries(budget.pools)) {
      expect(pool, name).toBeGreaterThanOrEqual(2);
      expect(pool, name).toBeLessThanOrEqual(byName.get(name)!.database.pool);
    }
  });

  it("refuses maximum replicas whose smallest pools exceed the budget", () => {
    const over = merge(values, parseValues("services:\n  dispatch:\n    autoscaling:\n      maxReplicas: 12\n"));
    expect(() => connectionBudget(over)).toThrow(/connection budget exceeded/);
  });
});
