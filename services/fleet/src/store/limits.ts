import { one, rows, type EntityManager } from "@transferops/kit";
import { date, int } from "./values.ts";

export interface LimitRecord {
  operator: string | null;
  op_type: string;
  max_amount: number;
  max_daily_agent: number;
  max_daily_sim: number;
  effective_from: Date;
}

const COLUMNS = `operator, op_type, max_amount, max_daily_agent, max_daily_sim, effective_from`;
const toLimit = (r: LimitRecord): LimitRecord => ({
  ...r,
  max_amount: int(r.max_amount),
  max_daily_agent: int(r.max_daily_agent),
  max_daily_sim: int(r.max_daily_sim),
  effective_from: date(r.effective_from),
});

/** A new version: the current row of (operator, op_type) is deactivated, the new one inserted. */
export async function recordLimit(
  em: EntityManager,
  l: {
    operator: string | null;
    op_type: string;
    max_amount: number;
    max_daily_agent: number;
    max_daily_sim: number;
    by: string;
  },
): Promise<LimitRecord> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('fleet.limits:' || coalesce(?::text, '') || ':' || ?))`, [
    l.operator,
    l.op_type,
  ]);
  await em.execute(
    `update fleet.fleet_limits set active = false, deactivated_at = now()
      where active and coalesce(operator, '') = coalesce(?::text, '') and op_type = ?`,
    [l.operator, l.op_type],
  );
  const r = await one<LimitRecord>(
    em,
    `insert into fleet.fleet_limits (operator, op_type, max_amount, max_daily_agent, max_daily_sim, recorded_by)
     values (?, ?, ?, ?, ?, ?) returning ${COLUMNS}`,
    [l.operator, l.op_type, l.max_amount, l.max_daily_agent, l.max_daily_sim, l.by],
  );
  return toLimit(r!);
}

export async function currentLimits(em: EntityManager): Promise<LimitRecord[]> {
  return (
    await rows<LimitRecord>(
      em,
      `select ${COLUMNS} from fleet.fleet_limits where active order by operator nulls first, op_type`,
    )
  ).map(toLimit);
}
