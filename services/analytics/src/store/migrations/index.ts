import { Migration0001Agents } from "./Migration0001Agents.ts";
import { Migration0002ReadModel } from "./Migration0002ReadModel.ts";
import { Migration0003Rollups } from "./Migration0003Rollups.ts";
import { Migration0004InboxPurge } from "./Migration0004InboxPurge.ts";
import { Migration0005DelaySeconds } from "./Migration0005DelaySeconds.ts";
import { Migration0006AmountCounts } from "./Migration0006AmountCounts.ts";
import { Migration0007AgentRollups } from "./Migration0007AgentRollups.ts";
import { Migration0008DropUnreadIndexes } from "./Migration0008DropUnreadIndexes.ts";
import { Migration0009LoadCounts } from "./Migration0009LoadCounts.ts";
import { Migration0010HandsetDaily } from "./Migration0010HandsetDaily.ts";
import { Migration0011WaitingMessages } from "./Migration0011WaitingMessages.ts";
import { Migration0012HandsetOldest } from "./Migration0012HandsetOldest.ts";
import { Migration0013AgentCovering } from "./Migration0013AgentCovering.ts";
import { Migration0014MonthlyRollups } from "./Migration0014MonthlyRollups.ts";
import { Migration0015AgentSeries } from "./Migration0015AgentSeries.ts";
import { Migration0016AgentDismissed } from "./Migration0016AgentDismissed.ts";

export const migrations = [
  Migration0001Agents,
  Migration0002ReadModel,
  Migration0003Rollups,
  Migration0004InboxPurge,
  Migration0005DelaySeconds,
  Migration0006AmountCounts,
  Migration0007AgentRollups,
  Migration0008DropUnreadIndexes,
  Migration0009LoadCounts,
  Migration0010HandsetDaily,
  Migration0011WaitingMessages,
  Migration0012HandsetOldest,
  Migration0013AgentCovering,
  Migration0014MonthlyRollups,
  Migration0015AgentSeries,
  Migration0016AgentDismissed,
];
