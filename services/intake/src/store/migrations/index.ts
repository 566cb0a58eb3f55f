import { Migration0001Transactions } from "./Migration0001Transactions.ts";

export const migrations = [Migration0001Transactions];
