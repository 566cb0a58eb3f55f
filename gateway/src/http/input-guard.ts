import { HttpError } from "./errors.ts";

/** Deepest nesting of arrays and objects a request body may have (the contract's deepest is 3). */
export const MAX_BODY_DEPTH = 16;

/**
 * What no route accepts, checked once for every route before its own schema: a NUL
 * character in any text (body values and keys, query values, path parameters), which
 * PostgreSQL cannot store, and a body nested deeper than MAX_BODY_DEPTH. Answers 422
 * `invalid_request` naming the field.
 */
export function checkInput(parts: { body?: unknown; query?: unknown; params?: Record<string, string> }): void {
  const problem =
    findProblem(parts.params ?? {}, "path", 0, 1) ??
    findProblem(parts.query ?? {}, "query", 0, 2) ??
    findProblem(parts.body, "body", 0, MAX_BODY_DEPTH);
  if (problem) {
    const { field, message, reason } = problem;
    throw new HttpError("invalid", [{ field, message }], { reason });
  }
}

interface Problem {
  field: string;
  message: string;
  reason: "nul_character" | "nested_too_deeply";
}

function findProblem(value: unknown, field: string, depth: number, maxDepth: number): Problem | undefined {
  if (typeof value === "string") {
    return value.includes("\u0000")
      ? { field, message: "must not contain a NUL character", reason: "nul_character" }
      : undefined;
  }
  if (value === null || typeof value !== "object") return undefined;
  if (depth >= maxDepth) {
    return { field, message: `must not nest deeper than ${maxDepth} levels`, reason: "nested_too_deeply" };
  }
  for (const [key, inner] of Object.entries(value)) {
    const at = `${field}.${key}`;
    if (key.includes("\u0000"))
      return { field: at, message: "must not contain a NUL character", reason: "nul_character" };
    const found = findProblem(inner, at, depth + 1, maxDepth);
    if (found) return found;
  }
  return undefined;
}
