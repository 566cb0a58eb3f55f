import { Migration0001Identity } from "./Migration0001Identity.ts";
import { Migration0002Fleet } from "./Migration0002Fleet.ts";
import { Migration0003OutboxNotify } from "./Migration0003OutboxNotify.ts";
import { Migration0004InboxPurge } from "./Migration0004InboxPurge.ts";
import { Migration0005OpenNotifications } from "./Migration0005OpenNotifications.ts";
import { Migration0006Autovacuum } from "./Migration0006Autovacuum.ts";
import { Migration0007AuditFilters } from "./Migration0007AuditFilters.ts";

/** Every migration of the fleet schema, in order. */
export const migrations = [
  Migration0001Identity,
  Migration0002Fleet,
  Migration0003OutboxNotify,
  Migration0004InboxPurge,
  Migration0005OpenNotifications,
  Migration0006Autovacuum,
  Migration0007AuditFilters,
];
