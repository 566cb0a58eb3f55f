import { EntityManager } from "@mikro-orm/postgresql";
import { vi } from "vitest";

/**
 * Records the SQL of every statement this process runs through MikroORM until `stop()` (any
 * caller's: a background job's statements land here too), beside each in `params` its
 * parameters and in `inTransaction` whether it ran inside a transaction (`Database.tx`). Stop it
 * in a `finally`.
 */
export function recordStatements(): {
  statements: string[];
  params: unknown[][];
  inTransaction: boolean[];
  stop(): void;
} {
  const statements: string[] = [];
  const params: unknown[][] = [];
  const inTransaction: boolean[] = [];
  const original = EntityManager.prototype.execute;
  const recorder = vi.spyOn(EntityManager.prototype, "execute").mockImplementation(function (
    this: EntityManager,
    ...args: unknown[]
  ) {
    statements.push(String(args[0]));
    params.push((args[1] as unknown[] | undefined) ?? []);
    inTransaction.push(this.isInTransaction());
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as never);
  return { statements, params, inTransaction, stop: () => recorder.mockRestore() };
}

/** Runs `run` and answers its answer and the last statement it sent through MikroORM, with its parameters. */
export async function lastStatementOf<T>(
  run: () => Promise<T>,
): Promise<{ result: T; sql: string; params: unknown[] }> {
  const recorded = recordStatements();
  let result: T;
  try {
    result = await run();
  } finally {
    recorded.stop();
  }
  return { result, sql: recorded.statements.at(-1)!, params: recorded.params.at(-1)! };
}

/**
 * Runs `run`, then `explain (analyze, buffers, costs off)` the last statement it sent through
 * MikroORM, with its parameters: its answer, the plan's lines, and the pages the statement read
 * (the first Buffers line's hits: the whole statement's).
 */
export async function planOfLast<T>(
  em: EntityManager,
  run: () => Promise<T>,
): Promise<{ result: T; plan: string[]; pages: number }> {
  const { result, sql, params } = await lastStatementOf(run);
  const found = (await em.execute(`explain (analyze, buffers, costs off) ${sql}`, params as never[])) as {
    "QUERY PLAN": string;
  }[];
  const plan = found.map((r) => r["QUERY PLAN"]);
  const buffers = plan.find((l) => l.includes("Buffers:"));
  return { result, plan, pages: Number(/shared hit=(\d+)/.exec(buffers ?? "")?.[1] ?? 0) };
}
