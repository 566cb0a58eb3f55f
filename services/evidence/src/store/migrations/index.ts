import { Migration0001Evidence } from "./Migration0001Evidence.ts";

/** Every migration of the evidence schema, in order. */
export const migrations = [Migration0001Evidence];
