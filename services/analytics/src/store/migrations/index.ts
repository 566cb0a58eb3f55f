import { Migration0001Agents } from "./Migration0001Agents.ts";

export const migrations = [Migration0001Agents];
