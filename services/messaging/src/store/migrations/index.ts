import { Migration0001Contacts } from "./Migration0001Contacts.ts";
import { Migration0002ImportFailures } from "./Migration0002ImportFailures.ts";
import { Migration0003OutboxNotify } from "./Migration0003OutboxNotify.ts";
import { Migration0004InboxPurge } from "./Migration0004InboxPurge.ts";
import { Migration0005Autovacuum } from "./Migration0005Autovacuum.ts";
import { Migration0006SearchPendingList } from "./Migration0006SearchPendingList.ts";

export const migrations = [
  Migration0001Contacts,
  Migration0002ImportFailures,
  Migration0003OutboxNotify,
  Migration0004InboxPurge,
  Migration0005Autovacuum,
  Migration0006SearchPendingList,
];
