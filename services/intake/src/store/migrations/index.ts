import { Migration0001Transactions } from "./Migration0001Transactions.ts";
import { Migration0002OutboxNotify } from "./Migration0002OutboxNotify.ts";
import { Migration0003ReceiverChanges } from "./Migration0003ReceiverChanges.ts";
import { Migration0004InboxPurge } from "./Migration0004InboxPurge.ts";
import { Migration0005Autovacuum } from "./Migration0005Autovacuum.ts";
import { Migration0006ListIndexes } from "./Migration0006ListIndexes.ts";

export const migrations = [
  Migration0001Transactions,
  Migration0002OutboxNotify,
  Migration0003ReceiverChanges,
  Migration0004InboxPurge,
  Migration0005Autovacuum,
  Migration0006ListIndexes,
];
