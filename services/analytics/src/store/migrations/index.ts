import { Migration0001Agents } from "./Migration0001Agents.ts";
import { Migration0002ReadModel } from "./Migration0002ReadModel.ts";

export const migrations = [Migration0001Agents, Migration0002ReadModel];
