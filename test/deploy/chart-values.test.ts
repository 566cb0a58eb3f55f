// The Helm chart's values agree with the code they deploy: every service a component calls
// lets that component in through its network policy, and every topic the code publishes to is
// created by the topics job. A cluster that enforces network policies, or a broker that does
// not create topics on first use, would otherwise break in production and nowhere else.

import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { Topics } from "@transferops/kit";

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
