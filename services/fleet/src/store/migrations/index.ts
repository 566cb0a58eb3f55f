import { Migration0001Identity } from "./Migration0001Identity.ts";

/** Every migration of the fleet schema, in order. */
export const migrations = [Migration0001Identity];
