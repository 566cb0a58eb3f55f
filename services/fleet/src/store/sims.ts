import { one, rows, type EntityManager, isUuid } from "@transferops/kit";
import type { BalanceBand } from "../domain/sims.ts";
import type { AgentRecord, Role } from "../domain/agents.ts";
import type { SimStatus } from "../domain/vocabulary.ts";
import type { GrantRecord } from "./access.ts";
import { TOKEN_VERSION } from "./devices.ts";
import { auditInsert, type AuditEntry } from "./agents.ts";
import { date, dateOrNull, int, intOrNull } from "./values.ts";

export interface SimRecord {
  id: string;
  operator: string;
  msisdn: string;
  status: SimStatus;
  device_id: string | null;
  subscription_slot: number | null;
  balance_mirror: number | null;
  balance_updated_at: Date | null;
  balance_source: string | null;
  balance_band: BalanceBand;
  low_balance_threshold: number | null;
  high_balance_threshold: number | null;
  absent_since: Date | null;
  created_at: Date;
}

export interface SimWithDevice extends SimRecord {
  device_status: string | null;
  device_label: string | null;
}

const COLUMNS = `s.id, s.operator, s.msisdn, s.status, s.device_id, s.subscription_slot, s.balance_mirror, s.balance_updated_at,
  s.balance_source, s.balance_band, s.low_balance_threshold, s.high_balance_threshold, s.absent_since, s.created_at`;
const WITH_DEVICE = `${COLUMNS}, d.status as device_status, d.label as device_label`;
const FROM = `fleet.sims s left join fleet.devices d on d.id = s.device_id`;

function toSim<T extends SimRecord>(r: T): T {
  return {
    ...r,
    subscription_slot: r.subscription_slot === null ? null : int(r.subscription_slot),
    balance_mirror: intOrNull(r.balance_mirror),
    low_balance_threshold: intOrNull(r.low_balance_threshold),
    high_balance_threshold: intOrNull(r.high_balance_threshold),
    balance_updated_at: dateOrNull(r.balance_updated_at),
    absent_since: dateOrNull(r.absent_since),
    created_at: date(r.created_at),
  };
}

/** SIM ids are UUIDs: anything else names no SIM (and never reaches the uuid cast). */
export async function findSim(em: EntityManager, id: string): Promise<SimWithDevice | undefined> {
  if (!isUuid(id)) return undefined;
  const r = await one<SimWithDevice>(em, `select ${WITH_DEVICE} from ${FROM} where s.id = ?`, [id]);
  return r && toSim(r);
}

export async function findSimForUpdate(em: EntityManager, id: string): Promise<SimRecord | undefined> {
  if (!isUuid(id)) return undefined;
  const r = await one<SimRecord>(em, `select ${COLUMNS} from fleet.sims s where s.id = ? for update`, [id]);
  return r && toSim(r);
}

export async function listSims(
  em: EntityManager,
  filter: { unassigned?: boolean; operator?: string; ids?: string[] } = {},
): Promise<SimWithDevice[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.unassigned === true) where.push("s.device_id is null");
  if (filter.unassigned === false) where.push("s.device_id is not null");
  if (filter.operator) {
    where.push("s.operator = ?");
    params.push(filter.operator);
  }
  if (filter.ids) {
    const ids = filter.ids.filter((id) => isUuid(id));
    if (!ids.length) return [];
    where.push("s.id in (?)");
    params.push(ids);
  }
  const sql = `select ${WITH_DEVICE} from ${FROM} ${where.length ? "where " + where.join(" and ") : ""} order by s.created_at, s.msisdn`;
  return (await rows<SimWithDevice>(em, sql, params)).map(toSim);
}

/** What dispatch's gates read of fleet, as of one snapshot. */
export interface DispatchContextRecord {
  breakerActive: boolean;
  agent: Pick<AgentRecord, "id" | "login" | "full_name" | "role" | "is_active"> | undefined;
  grant: GrantRecord | undefined;
  sims: SimWithDevice[];
}

/**
 * The breaker, the agent, its grant and the candidate SIMs (the named one, else those of the
 * operator, else all) in one statement: a row per SIM (one with no SIM when none fits), the
 * breaker's, the agent's and the grant's columns on each, except the grant's SIM list, which
 * only the first row carries: on every row it cost the number of SIMs times the grant's size in
 * parsed strings a create (300 × 300 = 90,000), which took half of fleet's core under the poll
 * benchmark's 10 creations a second and slowed every handset's authentication behind it.
 * Ids that are no UUID match nothing.
 */
export async function readDispatchContext(
  em: EntityManager,
  q: { agentId: string; simId?: string; operator?: string },
): Promise<DispatchContextRecord> {
  const params: unknown[] = [isUuid(q.agentId) ? q.agentId : null];
  let where = "";
  if (q.simId !== undefined) {
    where = "where s.id = ?::uuid";
    params.push(isUuid(q.simId) ? q.simId : null);
  } else if (q.operator) {
    where = "where s.operator = ?";
    params.push(q.operator);
  }
  const r = await rows<
    SimWithDevice & {
      breaker_active: boolean;
      agent_id: string | null;
      agent_login: string;
      agent_full_name: string;
      agent_role: Role;
      agent_is_active: boolean;
      grant_agent_id: string | null;
      grant_allowed_sim_ids: string[] | null;
      grant_allowed_op_types: string[];
      grant_max_amount: unknown;
    }
  >(
    em,
    `select b.active as breaker_active,
            a.id as agent_id, a.login as agent_login, a.full_name as agent_full_name, a.role as agent_role,
            a.is_active as agent_is_active,
            g.agent_id as grant_agent_id,
            case when row_number() over (order by c.created_at, c.msisdn) = 1
                 then g.allowed_sim_ids::text[] end as grant_allowed_sim_ids,
            g.allowed_op_types as grant_allowed_op_types, g.max_amount as grant_max_amount, c.*
       from fleet.circuit_breaker b
       left join fleet.agents a on a.id = ?::uuid
       left join fleet.access_grants g on g.agent_id = a.id
       left join lateral (select ${WITH_DEVICE} from ${FROM} ${where}) c on true
      where b.id = 1
      order by c.created_at, c.msisdn`,
    params,
  );
  const first = r[0];
  return {
    breakerActive: first.breaker_active,
    agent: first.agent_id
      ? {
          id: first.agent_id,
          login: first.agent_login,
          full_name: first.agent_full_name,
          role: first.agent_role,
          is_active: first.agent_is_active,
        }
      : undefined,
    grant: first.grant_agent_id
      ? {
          agent_id: first.grant_agent_id,
          allowed_sim_ids: (r.find((s) => s.grant_allowed_sim_ids !== null) ?? first).grant_allowed_sim_ids ?? [],
          allowed_op_types: first.grant_allowed_op_types,
          max_amount: int(first.grant_max_amount),
        }
      : undefined,
    sims: r.filter((s) => s.id !== null).map(toSim),
  };
}

export async function listDeviceSims(em: EntityManager, deviceIds: string[]): Promise<SimRecord[]> {
  if (!deviceIds.length) return [];
  return (
    await rows<SimRecord>(
      em,
      `select ${COLUMNS} from fleet.sims s where s.device_id in (?) order by s.subscription_slot`,
      [deviceIds],
    )
  ).map(toSim);
}

/** The SIMs a device holds, locked: placement checks run against them. */
export async function lockDeviceOccupants(
  em: EntityManager,
  deviceId: string,
): Promise<{ sim_id: string; subscription_slot: number }[]> {
  const r = await rows<{ sim_id: string; subscription_slot: number }>(
    em,
    `select id as sim_id, subscription_slot from fleet.sims where device_id = ? order by subscription_slot for update`,
    [deviceId],
  );
  return r.map((o) => ({ ...o, subscription_slot: int(o.subscription_slot) }));
}

export async function existingSimIds(em: EntityManager, ids: string[]): Promise<Set<string>> {
  const valid = ids.filter((id) => isUuid(id));
  if (!valid.length) return new Set();
  const r = await rows<{ id: string }>(em, `select id from fleet.sims where id in (?)`, [valid]);
  return new Set(r.map((x) => x.id));
}

export async function msisdnTaken(em: EntityManager, msisdn: string): Promise<boolean> {
  return (await rows(em, `select 1 from fleet.sims where msisdn = ?`, [msisdn])).length > 0;
}

/** Inserts a SIM; undefined when the MSISDN is taken (unique index). */
export async function insertSim(
  em: EntityManager,
  s: {
    id: string;
    operator: string;
    msisdn: string;
    device_id: string | null;
    subscription_slot: number | null;
    pin_key_id: string;
    pin_ciphertext: Buffer;
  },
): Promise<boolean> {
  const r = await rows(
    em,
    `insert into fleet.sims (id, operator, msisdn, device_id, subscription_slot, pin_key_id, pin_ciphertext)
     values (?, ?, ?, ?, ?, ?, ?) on conflict (msisdn) do nothing returning id`,
    [s.id, s.operator, s.msisdn, s.device_id, s.subscription_slot, s.pin_key_id, s.pin_ciphertext],
  );
  return r.length > 0;
}

export async function updateSimFields(
  em: EntityManager,
  id: string,
  change: Partial<
    Pick<
      SimRecord,
      | "status"
      | "low_balance_threshold"
      | "high_balance_threshold"
      | "device_id"
      | "subscription_slot"
      | "balance_band"
      | "absent_since"
    >
  >,
): Promise<void> {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) continue;
    sets.push(`${k} = ?`);
    params.push(v);
  }
  if (!sets.length) return;
  sets.push("updated_at = now()");
  await em.execute(`update fleet.sims set ${sets.join(", ")} where id = ?`, [...params, id] as never[]);
}

/**
 * Writes the mirror with its time and source together (never one without the others) and,
 * in the same statement (a CTE), its audit row.
 */
export async function writeBalance(
  em: EntityManager,
  id: string,
  b: { balance: number; observed_at: Date; source: string; band: BalanceBand },
  entry: AuditEntry,
): Promise<void> {
  const a = auditInsert(entry);
  await em.execute(
    `with audited as (${a.sql})
     update fleet.sims set balance_mirror = ?, balance_updated_at = ?, balance_source = ?, balance_band = ?, updated_at = now() where id = ?`,
    [...a.params, b.balance, b.observed_at, b.source, b.band, id],
  );
}

/**
 * A SIM's sealed PIN and where it is, for a reveal; with a device, whether that device's live
 * token is the given version (false when the device, its token or the version is gone). No
 * version (a claim from a gateway older than the version, which authenticated the device at
 * fleet just before, during a rolling upgrade): whether the device has a live token at all.
 *
 * The reveal's audit row is written by the same statement (one round trip between the
 * transaction's begin and commit), only when the PIN goes to its caller: no device named, or
 * the device that holds the SIM now, its token standing. A PIN that then does not open must
 * roll the transaction back, audit included (`revealPin`). The audit names the operation and
 * the key, never the PIN.
 */
export async function readPinForReveal(
  em: EntityManager,
  id: string,
  operationId: string,
  device?: { id: string; tokenVersion: string },
): Promise<
  | {
      pin_key_id: string;
      pin_ciphertext: Buffer;
      device_id: string | null;
      subscription_slot: number | null;
      token_stands: boolean;
      audited: boolean;
    }
  | undefined
> {
  if (!isUuid(id)) return undefined;
  const audited = auditInsert(
    { action: "sim.pin_revealed", target: id, details: { operation_id: operationId } },
    {
      from: `from sealed where ?::text = '' or (sealed.token_stands and sealed.device_id = ?)`,
      params: [device?.id ?? "", device?.id ?? ""],
      details: `jsonb_build_object('key_id', sealed.pin_key_id)`,
    },
  );
  const r = await one<{
    pin_key_id: string;
    pin_ciphertext: Buffer;
    device_id: string | null;
    subscription_slot: number | string | null;
    token_stands: boolean;
    audited: boolean;
  }>(
    em,
    `with sealed as (
       select s.pin_key_id, s.pin_ciphertext, s.device_id, s.subscription_slot,
              coalesce((select d.token_hash is not null and (?::text = '' or ${TOKEN_VERSION} = ?)
                          from fleet.devices d where d.id = ?), false) as token_stands
         from fleet.sims s where s.id = ?),
     audited as (${audited.sql} returning 1)
     select sealed.*, exists (select from audited) as audited from sealed`,
    [device?.tokenVersion ?? "", device?.tokenVersion ?? "", device?.id ?? "", id, ...audited.params],
  );
  return (
    r && {
      ...r,
      subscription_slot: r.subscription_slot === null ? null : int(r.subscription_slot),
    }
  );
}

export async function deleteSim(em: EntityManager, id: string): Promise<boolean> {
  return (await rows(em, `delete from fleet.sims where id = ? returning id`, [id])).length > 0;
}
