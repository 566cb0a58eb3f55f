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
