// Admins in the simulation beyond actors.ts's: wording rules drafted (new rules and new
// versions), tried, activated (by the other admin, or by their author) and retired, texts in the
// taught wordings (from the operator's sender or a forger); access grants narrowed and a
// supervisor demoted, each followed at once by the revoked agent acting on that scope (on the
// other gateway), which must be refused. Every choice is drawn when the action is chosen.
import { referenceOf, type OutgoingSms } from "../simulator/operator-sms.ts";
import { sleep } from "../infra/util.ts";
import { WEBHOOK_ACTIONS, WebhookAdmin, type WebhookAction } from "./webhooks.ts";
import {
  ACTIVE,
  CUSTOMERS,
  FORGER_NUMBERS,
  acknowledged,
  customersOf,
  outcomeOf,
  rowsWhere,
  type SimAgent,
  type SimContext,
} from "./context.ts";

export const ADMIN_ACTIONS = {
  wordingDraft: 4,
  wordingTry: 0.8,
  wordingActivate: 3,
  wordingRetire: 0.6,
  wordingText: 5,
  narrowGrant: 1.2,
  demote: 1.5,
  ...WEBHOOK_ACTIONS,
} as const;
export type AdminAction = keyof typeof ADMIN_ACTIONS;
export const ADMIN_ACTOR_OF: Record<AdminAction, string> = {
  wordingDraft: "admin",
  wordingTry: "admin",
  wordingActivate: "admin",
  wordingRetire: "admin",
  wordingText: "operator",
  narrowGrant: "admin",
  demote: "admin",
  webhookRegister: "admin",
  webhookRotate: "admin",
  webhookDelete: "admin",
};

/** A wording the operator might start using, and what an admin may teach it as. */
const DEPOSIT_LIKE = "SIMCASH: depot de {amount} vers {phone} enregistre. Ref {ref}. Solde {balance}.";
const RECEIVED = "SIMCASH: vous avez recu {amount} du {phone}. Ref {ref}. Solde {balance}.";
const FAILED = "SIMCASH: echec du depot de {amount} vers {phone}. Ref {ref}.";
export const WORDINGS = {
  // money received, and a DEP rule over that very wording (refused once such a text is stored)
  received: { kind: "UV_IN", direction: "in", template: RECEIVED },
  depositOverReceived: { kind: "DEP", direction: "out", template: RECEIVED },
  // a deposit's wording taught as nothing, as a refusal, and as a deposit
  silent: { kind: null, direction: null, template: DEPOSIT_LIKE },
  asFailure: { kind: "FAIL", direction: null, template: DEPOSIT_LIKE },
  deposit: { kind: "DEP", direction: "out", template: DEPOSIT_LIKE },
  failed: { kind: "FAIL", direction: null, template: FAILED },
} as const;
type Wording = keyof typeof WORDINGS;
const TEXTS = { deposit: 5, received: 4, failed: 2 } as const;
const DIALLED = ["running", "awaiting_evidence", "no_evidence"];

interface KnownRule {
  versionId: string;
  ruleId: string;
  wording: Wording;
  /** 0: the first admin drafted it, 1: the second. */
  author: number;
  state: string;
}

/** A narrowing of a grant and the action it revokes (tried right after the acknowledgement). */
const NARROWINGS = { types: 4, amount: 3, sims: 3 } as const;
const FULL_GRANT_AMOUNT = 100_000;

export class Admins {
  readonly rules: KnownRule[] = [];
  /** Agents whose grant or role is being changed (one change at a time each). */
  private readonly changing = new Set<string>();
  /** Webhooks registered to the simulation's receiver, rotated and deleted (webhooks.ts). */
  readonly webhooks: WebhookAdmin;

  constructor(private readonly c: SimContext) {
    this.webhooks = new WebhookAdmin(c);
  }

  prepare(action: AdminAction, n: number, gw: string): () => Promise<void> {
    switch (action) {
      case "wordingDraft":
        return this.prepareDraft();
      case "wordingTry":
      case "wordingActivate":
      case "wordingRetire":
        return this.prepareRuleStep(action, gw);
      case "wordingText":
        return this.prepareText(n);
      case "narrowGrant":
        return this.prepareNarrow(n, gw);
      case "demote":
        return this.prepareDemote(gw);
      case "webhookRegister":
      case "webhookRotate":
      case "webhookDelete":
        return this.webhooks.prepare(action satisfies WebhookAction, n, gw);
    }
  }

  private adminToken(i: number): string {
    return i === 0 ? this.c.adminToken : this.c.secondAdminToken;
  }

  private prepareDraft(): () => Promise<void> {
    const r = this.c.random;
    const wording = r.weighted({ received: 4, depositOverReceived: 2, silent: 3, asFailure: 2, deposit: 3, failed: 2 });
    const author = r.int(2);
    const newVersion = r.chance(0.25);
    const rulePick = r.int(1000);
    const gw = this.c.gatewayUrls[r.int(this.c.gatewayUrls.length)];
    return async () => {
      const w = WORDINGS[wording];
      const of = newVersion ? this.rules[rulePick % Math.max(1, this.rules.length)] : undefined;
      const body = {
        ...(of ? { rule_id: of.ruleId } : {}),
        operator: "operator_a",
        kind: w.kind,
        language: "fr",
        direction: w.direction,
        template: w.template,
      };
      const a = await this.c.http(gw, "POST", "/v1/admin/wording-rules", { token: this.adminToken(author) }, body);
      const versionId = a.body?.version_id as string | undefined;
      this.c.note(
        [versionId ?? "", of?.ruleId ?? ""],
        `admin ${author + 1} drafts wording rule "${wording}" (${w.kind ?? "no kind"})${of ? ` as a new version of ${of.ruleId}` : ""} → ${a.status} ${outcomeOf(a)}`,
      );
      if (a.status === 201 && versionId)
        this.rules.push({ versionId, ruleId: String(a.body.rule_id), wording, author, state: "draft" });
    };
  }

  private prepareRuleStep(action: "wordingTry" | "wordingActivate" | "wordingRetire", gw: string) {
    const r = this.c.random;
    const pick = r.int(1000);
    // A rule that can confirm needs a second admin: its author tries now and then (403).
    const byAuthor = r.chance(0.2);
    const other = r.int(2);
    return async () => {
      const wanted = action === "wordingActivate" ? "draft" : action === "wordingRetire" ? "active" : "";
      const inState = this.rules.filter((x) => !wanted || x.state === wanted);
      const list = inState.length && pick % 5 ? inState : this.rules;
      const rule = list[pick % Math.max(1, list.length)];
      if (!rule) return;
      const admin = byAuthor ? rule.author : action === "wordingActivate" ? 1 - rule.author : other;
      const verb = { wordingTry: "try", wordingActivate: "activate", wordingRetire: "retire" }[action];
      const path = `/v1/admin/wording-rules/${rule.versionId}/${verb}`;
      const a = await this.c.http(gw, "POST", path, { token: this.adminToken(admin) });
      const trial =
        verb === "try" && a.status === 200
          ? ` (reads ${a.body?.reads}, money received ${a.body?.money_received}, by kind ${JSON.stringify(a.body?.by_kind ?? {})})`
          : "";
      this.c.note(
        [rule.versionId, rule.ruleId],
        `admin ${admin + 1} ${verb}s wording rule "${rule.wording}" v${rule.versionId.slice(0, 8)} (${rule.state}) → ${a.status} ${outcomeOf(a)}${trial}`,
      );
      if (a.status !== 200 || verb === "try") return;
      if (verb === "activate")
        for (const x of this.rules) if (x.ruleId === rule.ruleId && x.state === "active") x.state = "retired";
      rule.state = String(a.body?.state ?? rule.state);
    };
  }

  /**
   * A text in one of the taught wordings, for the amount of a transfer open on the SIM: from the
   * operator's sender, one its handset dialled (a receipt in a drifted wording: the money moved);
   * from a forger, any.
   */
  private prepareText(n: number): () => Promise<void> {
    const r = this.c.random;
    const handset = r.int(this.c.handsetCount);
    const wording = r.weighted(TEXTS);
    const forged = r.chance(0.2);
    const sender = forged ? r.pick(FORGER_NUMBERS)! : "MobileMoney";
    const amountPick = r.int(1000);
    const balanceAfter = 10_000 + r.int(200) * 500;
    return async () => {
      // The wordings are operator_a's: texts go to its SIMs only (the draw maps onto them).
      const ofA = this.c.simIds().filter((_, i) => this.c.simOperators()[i] === "operator_a");
      const simId = ofA[handset % Math.max(1, ofA.length)];
      const statuses = forged ? [...ACTIVE, "no_evidence"] : DIALLED;
      const open = rowsWhere(
        this.c.rows(),
        (x) => x.sim_id === simId && statuses.includes(x.status) && x.op_type === "deposit",
      );
      const op = open[amountPick % Math.max(1, open.length)];
      const amount = op?.montant ?? 1000 * (1 + (amountPick % 25));
      const at = new Date();
      const fill: Record<string, string> = {
        amount: `${amount} FCFA`,
        phone: CUSTOMERS[amountPick % CUSTOMERS.length],
        ref: referenceOf("operator_a", `taught-${n}`, at),
        balance: `${balanceAfter} FCFA`,
      };
      const template = wording === "deposit" ? DEPOSIT_LIKE : wording === "received" ? RECEIVED : FAILED;
      const sms: OutgoingSms = {
        simId,
        operator: "operator_a",
        sender,
        raw: template.replace(/\{([a-z]+)\}/g, (_, slot: string) => fill[slot]),
        receivedAt: at,
        clientMessageId: `sim-${r.seed}-${n}`,
        about: { kind: wording === "received" ? "movement" : wording === "failed" ? "refusal" : "deposit", amount },
      };
      await this.c.forward(
        this.c.simIds().indexOf(simId),
        sms,
        `in a taught wording (${wording})${forged ? " forged" : ""}`,
        op?.operation_id,
      );
    };
  }

  /** Narrows an agent's grant; its next create or launch on the revoked scope must be refused. */
  private prepareNarrow(n: number, gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100);
    const how = r.weighted(NARROWINGS);
    const gw2 = this.c.gatewayUrls[r.int(this.c.gatewayUrls.length)];
    const holdMs = 500 + r.int(3000);
    const sim = r.int(this.c.handsetCount);
    return async () => {
      const agent = this.revocable(pick, "agent");
      if (!agent) return;
      this.changing.add(agent.agentId);
      try {
        const sims = this.c.simIds();
        const kept = sims[sim];
        const grant = {
          allowed_sim_ids: how === "sims" ? [kept] : sims,
          allowed_op_types: how === "types" ? ["balance"] : ["deposit", "balance"],
          max_amount: how === "amount" ? 1000 : FULL_GRANT_AMOUNT,
        };
        const a = await this.grant(gw, agent, grant, `narrows (${how})`);
        if (a.status !== 200) return;
        const removed = sims.find((s) => s !== kept) ?? kept;
        await this.tryRevoked(gw2, agent, `sim-${r.seed}-${n}-revoked`, how === "sims" ? removed : undefined);
        await sleep(holdMs);
        await this.grant(
          gw,
          agent,
          { allowed_sim_ids: sims, allowed_op_types: ["deposit", "balance"], max_amount: FULL_GRANT_AMOUNT },
          "restores",
        );
      } finally {
        this.changing.delete(agent.agentId);
      }
    };
  }

  private revocable(pick: number, role: SimAgent["role"]): SimAgent | undefined {
    const list = this.c.agents.slice(1).filter((a) => a.active && a.role === role && !this.changing.has(a.agentId));
    return list[pick % Math.max(1, list.length)];
  }

  private async grant(gw: string, agent: SimAgent, grant: Record<string, unknown>, what: string) {
    const path = `/v1/admin/agents/${agent.agentId}/access`;
    const a = await this.c.http(gw, "PATCH", path, { token: this.c.adminToken }, grant);
    this.c.note(
      [agent.agentId],
      `admin ${what} agent ${agent.login}'s grant to ${JSON.stringify(grant)} → ${a.status}`,
    );
    return a;
  }

  /** A deposit of 5,000 F for the agent (on `simId` when named): outside every narrowed grant. */
  private async tryRevoked(gw: string, agent: SimAgent, requestId: string, simId?: string): Promise<void> {
    // On the SIM taken away, of that SIM's operator: another would be refused for that, not the grant.
    const network = (simId && this.c.simOperators()[this.c.simIds().indexOf(simId)]) || "operator_a";
    const body = {
      request_id: requestId,
      agent_id: agent.agentId,
      operator: network,
      type_op: "deposit",
      montant: 5000,
      client: { msisdn: customersOf(network)[0], nom: "Client Simule" },
      ...(simId ? { sim_id: simId } : {}),
    };
    const a = await this.c.http(gw, "POST", "/v1/operations", { apiKey: true }, body);
    this.c.checked(7);
    const id = a.body?.operation_id as string | undefined;
    this.c.note(
      [agent.agentId, ...(id ? [id] : [])],
      `automation creates ${requestId} for agent ${agent.login} outside its narrowed grant → ${a.status} ${outcomeOf(a)}`,
    );
    if (acknowledged(a))
      this.c.note(
        [agent.agentId, ...(id ? [id] : [])],
        `VIOLATION-CANDIDATE(7) a create for agent ${agent.login} outside the grant it was just narrowed to was accepted (${a.status} ${id ?? ""})`,
      );
  }

  /** The supervisor demoted to agent: attaching a text to another's operation must be refused. */
  private prepareDemote(gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100);
    const evidencePick = r.int(1000);
    const opPick = r.int(1000);
    const gw2 = this.c.gatewayUrls[r.int(this.c.gatewayUrls.length)];
    const holdMs = 500 + r.int(3000);
    return async () => {
      const agent = this.revocable(pick, "supervisor");
      if (!agent) return;
      this.changing.add(agent.agentId);
      try {
        if ((await this.role(gw, agent, "agent")).status !== 200) return;
        agent.role = "agent";
        await this.tryDemoted(gw2, agent, evidencePick, opPick);
        await sleep(holdMs);
        if ((await this.role(gw, agent, "supervisor")).status === 200) agent.role = "supervisor";
      } finally {
        this.changing.delete(agent.agentId);
      }
    };
  }

  private async role(gw: string, agent: SimAgent, role: SimAgent["role"]) {
    const path = `/v1/agents/admin/${agent.agentId}`;
    const a = await this.c.http(gw, "PATCH", path, { token: this.c.adminToken }, { role });
    this.c.note([agent.agentId], `admin makes ${agent.login} ${role} → ${a.status}`);
    return a;
  }

  private async tryDemoted(gw: string, agent: SimAgent, evidencePick: number, opPick: number): Promise<void> {
    const list = await this.c.http(gw, "GET", "/v1/evidences?unmatched=true&all=true&limit=250", {
      token: this.c.adminToken,
    });
    if (list.status !== 200 || !Array.isArray(list.body) || !list.body.length) return;
    const evidences = [...(list.body as { evidence_id?: string; id?: string; sim_id: string }[])].sort((a, b) =>
      String(a.evidence_id ?? a.id).localeCompare(String(b.evidence_id ?? b.id)),
    );
    const ev = evidences[evidencePick % evidences.length];
    const evidenceId = String(ev.evidence_id ?? ev.id);
    const ops = rowsWhere(
      this.c.rows(),
      (x) => x.sim_id === ev.sim_id && x.agent_id !== agent.agentId && [...ACTIVE, "no_evidence"].includes(x.status),
    );
    const op = ops[opPick % Math.max(1, ops.length)];
    if (!op) return;
    const path = `/v1/operations/${op.operation_id}/evidence`;
    const a = await this.c.http(gw, "POST", path, { token: agent.token }, { evidence_id: evidenceId });
    this.c.checked(7);
    this.c.note(
      [op.operation_id, evidenceId, agent.agentId],
      `demoted ${agent.login} attaches message ${evidenceId} to another's operation ${op.operation_id} → ${a.status} ${outcomeOf(a)}`,
    );
    if (acknowledged(a))
      this.c.note(
        [op.operation_id, evidenceId, agent.agentId],
        `VIOLATION-CANDIDATE(7) ${agent.login}, demoted to agent (acknowledged), attached a text to another agent's operation (${a.status})`,
      );
  }
}
