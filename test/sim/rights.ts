// What each agent may see, and since when (invariant 14): its rights (sessions standing, role,
// the SIMs of its grant) as a timeline of the values that may have been in effect at each
// moment. The checker sees an admin's change go out and come back (`calling`): the new rights
// may apply from the moment the call was sent, the old ones no more once it was acknowledged.
// That is the bound the services document: nothing caches a grant (dispatch and evidence ask
// fleet's GetAgentScope at every request; docs/decisions/gateway.md: access grants are not in the
// Caller), and a role or a deactivation reaches the other gateway with fleet's announcement,
// which fleet hears before it answers (gateway/src/http/auth-replicas.test.ts: the other replica
// refuses the very next request). Fleet's table, read every second (`observed`), is the fallback
// for a change not seen going out: the old rights then count until that read.

/** What an agent may see: whether its sessions stand, its role and the SIMs of its grant. */
export interface Rights {
  active: boolean;
  role: string;
  sims: string[];
}

/** Rights possibly in effect from `from` to `until` (performance.now() ms). */
interface Held extends Rights {
  from: number;
  until: number;
}

export type Service = "evidence" | "dispatch";

const sameRights = (a: Rights, b: Rights) =>
  a.active === b.active && a.role === b.role && a.sims.join() === b.sims.join();

/** The change of rights an admin's call asks for, and the agent it names; undefined for any other call. */
export function changeOf(
  method: string,
  path: string,
  body: unknown,
): { agentId: string; change: Partial<Rights> } | undefined {
  const b = (body ?? {}) as { allowed_sim_ids?: string[]; role?: string; is_active?: boolean };
  let m = /^\/v1\/admin\/agents\/([0-9a-f-]{36})\/access$/.exec(path);
  if (m && method === "PATCH") return { agentId: m[1], change: { sims: [...(b.allowed_sim_ids ?? [])].sort() } };
  m = /^\/v1\/agents\/admin\/([0-9a-f-]{36})$/.exec(path);
  if (m && method === "PATCH") {
    const change: Partial<Rights> = {};
    if (b.role) change.role = b.role;
    if (typeof b.is_active === "boolean") change.active = b.is_active;
    return { agentId: m[1], change };
  }
  m = /^\/v1\/agents\/admin\/([0-9a-f-]{36})\/(deactivate|activate)$/.exec(path);
  if (m && method === "POST") return { agentId: m[1], change: { active: m[2] === "activate" } };
  return undefined;
}

export class RightsTimeline {
  private readonly held = new Map<string, Held[]>();
  /** When the newest table read that was applied started. */
  private lastRead = -Infinity;

  /**
   * Fleet's agents and grants as a read started at `start` and answered at `end` saw them. An
   * agent seen for the first time held those rights from the start; rights no timeline value
   * explains are a change not seen going out: held since the previous read, the others until this one.
   */
  observed(rows: ({ id: string } & Rights)[], start: number, end: number): void {
    if (start < this.lastRead) return; // an older read answered late
    const previous = this.lastRead;
    this.lastRead = start;
    for (const { id, ...r } of rows) {
      const list = this.held.get(id);
      if (!list) {
        this.held.set(id, [{ ...r, from: -Infinity, until: Infinity }]);
        continue;
      }
      if (list.some((h) => h.from <= end && h.until >= start && sameRights(h, r))) continue;
      for (const h of list) h.until = Math.min(h.until, end);
      list.push({ ...r, from: previous, until: Infinity });
    }
  }

  /**
   * An admin's call changing `agentId`'s rights goes out at `sentAt`: the new rights may hold
   * from now. Returns what to call with its answer: acknowledged (2xx), the earlier rights end
   * then (true is returned); refused (4xx), nothing changed; no answer or a 5xx, either may hold.
   */
  calling(
    agentId: string,
    change: Partial<Rights>,
    sentAt: number,
  ): ((status: number, at: number) => boolean) | undefined {
    const list = this.held.get(agentId);
    const last = list?.at(-1);
    if (!list || !last) return undefined;
    const entry: Held = {
      active: change.active ?? last.active,
      role: change.role ?? last.role,
      sims: change.sims ?? last.sims,
      from: sentAt,
      until: Infinity,
    };
    list.push(entry);
    return (status, at) => {
      const index = list.indexOf(entry);
      if (status >= 200 && status < 300) {
        for (const h of list.slice(0, index)) h.until = Math.min(h.until, at);
        return true;
      }
      if (status >= 400 && status < 500 && index >= 0) list.splice(index, 1);
      return false;
    };
  }

  /**
   * Whether the timeline holds the agent yet. A new agent (a deactivated one's replacement) is
   * entered when fleet's table is next read (`observed`, every second): until then nothing it is
   * answered can be judged, and `during` would say it held no rights at all.
   */
  knows(agentId: string): boolean {
    return this.held.has(agentId);
  }

  /** The rights `agentId` may have held at some moment from `from` to `to`. */
  during(agentId: string, from: number, to: number): Rights[] {
    return (this.held.get(agentId) ?? []).filter((h) => h.from <= to && h.until >= from);
  }

  /** Whether its sessions may have stood at some moment from `from` to `to`. */
  active(agentId: string, from: number, to: number): boolean {
    return this.during(agentId, from, to).some((h) => h.active);
  }

  /**
   * Whether the agent may have seen, at some moment from `from` to `to`, what is on a SIM:
   * orphans (`evidence`: a supervisor sees the fleet's) or unproven transfers (`dispatch`: a
   * supervisor its grant's, as an agent).
   */
  sees(agentId: string, simId: string | null, from: number, to: number, service: Service): boolean {
    const fleet = service === "evidence" ? ["supervisor", "admin"] : ["admin"];
    return this.during(agentId, from, to).some(
      (h) => h.active && (fleet.includes(h.role) || (simId !== null && h.sims.includes(simId))),
    );
  }
}
