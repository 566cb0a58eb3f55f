import type { ServiceImpl } from "@connectrpc/connect";
import { OPERATORS, opt, big, ts } from "@transferops/kit";
import type { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { canConfirm, canConfirmBalance, isMovement, parseMessage } from "../domain/parsers/parse.ts";
import type { Operator } from "../domain/parsers/types.ts";
import { invalid } from "../domain/reasons.ts";
import { requireAdmin } from "../domain/scope.ts";
import { attach, dismiss, movements, unmatchedEvidence } from "../flows/board.ts";
import type { FlowDeps } from "../flows/ports.ts";
import { balanceChain, dailyReconciliation } from "../flows/reconciliation.ts";
import { submitMessages } from "../flows/submit.ts";
import { resetEvidence } from "../flows/reset.ts";
import { activateRule, addRule, listRules, retireRule, tryRule } from "../flows/wording-rules.ts";
import { toChainLink, toEvidence } from "../flows/mappers.ts";
import { toWordingRule } from "../events/wording.ts";
import { listUnknown, proposeRule, TRIAL_SAMPLE } from "../flows/unknown-wordings.ts";
import { TEXT_CHARS } from "../flows/wording-rules.ts";

type Impl = ServiceImpl<typeof EvidenceService>;

/** Thin handlers: proto in, flow, proto out. Refusals are DomainErrors, mapped once by the kit. */
export function evidenceHandlers(
  deps: FlowDeps,
  reread: { kick(): void } = { kick() {} },
): ServiceImpl<typeof EvidenceService> {
  return {
    ...messageHandlers(deps),
    ...reconciliationHandlers(deps),
    ...wordingRuleHandlers(deps, reread),
    ...unknownWordingHandlers(deps),
  };
}

/** The operator messages: submitted, listed, dismissed, attached, parsed; and the reset. */
function messageHandlers(
  deps: FlowDeps,
): Pick<
  Impl,
  | "submitMessages"
  | "listUnmatchedEvidence"
  | "dismissEvidence"
  | "listMovements"
  | "attachEvidence"
  | "parseMessage"
  | "resetEvidence"
> {
  return {
    async submitMessages(req) {
      return { results: await submitMessages(deps, req) };
    },
    async listUnmatchedEvidence(req) {
      const found = await unmatchedEvidence(deps, req);
      return { evidences: found.map(toEvidence) };
    },
    async dismissEvidence(req) {
      await dismiss(deps, req);
      return {};
    },
    async listMovements(req) {
      const found = await movements(deps, req);
      return { evidences: found.map(toEvidence) };
    },
    async attachEvidence(req) {
      const { operation, evidence } = await attach(deps, req);
      return { operation, evidence: toEvidence(evidence) };
    },
    async parseMessage(req) {
      if (!OPERATORS.includes(req.operator as Operator)) {
        throw invalid("operator", `must be one of ${OPERATORS.join(", ")}`, req.operator);
      }
      const p = parseMessage(req.operator as Operator, req.text);
      return {
        kind: opt(p.kind),
        amount: big(p.amount),
        fee: big(p.fee),
        balanceAfter: big(p.balance_after),
        operatorRef: opt(p.operator_ref),
        counterpartyMsisdn: opt(p.counterparty_msisdn),
        counterpartyName: opt(p.counterparty_name),
        direction: opt(p.direction),
        language: opt(p.language),
        rule: opt(p.rule),
        canConfirm: canConfirm(p.kind),
        canConfirmBalance: canConfirmBalance(p.kind),
        isMovement: isMovement(p.kind),
      };
    },
    async resetEvidence(req) {
      requireAdmin(req.caller);
      const deleted = await resetEvidence(deps);
      return {
        deleted: { evidences: BigInt(deleted.messages), daily_reconciliations: BigInt(deleted.reconciliations) },
      };
    },
  };
}

/** The daily reconciliation and a SIM's balance chain. */
function reconciliationHandlers(deps: FlowDeps): Pick<Impl, "getDailyReconciliation" | "getBalanceChain"> {
  return {
    async getDailyReconciliation(req) {
      const { fleet, sims } = await dailyReconciliation(deps, req);
      return {
        fleet: {
          day: fleet.day,
          sims: fleet.sims,
          openingBalance: BigInt(fleet.opening_balance),
          closingBalance: BigInt(fleet.closing_balance),
          provenXaf: BigInt(fleet.proven_xaf),
          provenFeesXaf: BigInt(fleet.proven_fees_xaf),
          inXaf: BigInt(fleet.in_xaf),
          outXaf: BigInt(fleet.out_xaf),
          feesXaf: BigInt(fleet.fees_xaf),
          explainedXaf: BigInt(fleet.explained_xaf),
          unexplainedXaf: BigInt(fleet.unexplained_xaf),
          chainBreaks: fleet.chain_breaks,
          simsNotReconciled: fleet.sims_not_reconciled,
        },
        sims: sims.map((s) => ({
          simId: s.sim_id,
          day: s.day,
          openingBalance: big(s.opening_balance),
          closingBalance: big(s.closing_balance),
          provenXaf: BigInt(s.proven_xaf),
          provenFeesXaf: BigInt(s.proven_fees_xaf),
          inXaf: BigInt(s.in_xaf),
          outXaf: BigInt(s.out_xaf),
          feesXaf: BigInt(s.fees_xaf),
          explainedXaf: BigInt(s.explained_xaf),
          unexplainedXaf: big(s.unexplained_xaf),
          breaks: s.breaks.map((b) => ({
            previousMessageId: b.previous_message_id,
            messageId: b.message_id,
            expectedBalance: BigInt(b.expected_balance),
            foundBalance: BigInt(b.found_balance),
            gap: BigInt(b.gap),
          })),
          unreadableMovements: s.unreadable_movements,
          messages: s.messages,
          confirmed: s.confirmed,
          unmatched: s.unmatched,
          movements: s.movements,
          divergent: s.divergent,
          unknownSender: s.unknown_sender,
        })),
      };
    },
    async getBalanceChain(req) {
      const page = await balanceChain(deps, req);
      return {
        simId: page.sim_id,
        day: page.day,
        total: page.total,
        breaks: page.breaks,
        offset: page.offset,
        links: page.links.map(toChainLink),
      };
    },
  };
}

/** The wording rules taught at run time: listed, added, tried, activated, retired. */
function wordingRuleHandlers(
  deps: FlowDeps,
  reread: { kick(): void },
): Pick<Impl, "listWordingRules" | "addWordingRule" | "tryWordingRule" | "activateWordingRule" | "retireWordingRule"> {
  return {
    async listWordingRules(req) {
      return { rules: (await listRules(deps, req)).map(toWordingRule) };
    },
    async addWordingRule(req) {
      return { rule: toWordingRule(await addRule(deps, req)) };
    },
    async tryWordingRule(req) {
      const t = await tryRule(deps, req);
      return {
        trial: {
          rule: toWordingRule(t.rule),
          scanned: BigInt(t.scanned),
          truncated: t.truncated,
          reads: BigInt(t.reads),
          orphans: BigInt(t.byOutcome.orphan),
          stored: BigInt(t.byOutcome.stored),
          notCorrelated: BigInt(t.byOutcome.not_correlated),
          byKind: Object.fromEntries(Object.entries(t.byKind).map(([k, n]) => [k, BigInt(n)])),
          readOtherwise: BigInt(t.readOtherwise),
          moneyReceived: BigInt(t.moneyReceived),
          sample: t.sample.map(({ message: m, after: p, rereadable, moneyReceivedAsProof }) => ({
            rereadable,
            moneyReceivedAsProof,
            messageId: m.id,
            simId: m.sim_id,
            receivedAt: ts(m.received_at),
            outcome: m.outcome,
            beforeKind: opt(m.kind),
            beforeRule: opt(m.parse_rule),
            kind: opt(p.kind),
            amount: big(p.amount),
            fee: big(p.fee),
            balanceAfter: big(p.balance_after),
            operatorRef: opt(p.operator_ref),
            counterpartyMsisdn: opt(p.counterparty_msisdn),
            counterpartyName: opt(p.counterparty_name),
            direction: opt(p.direction),
            text: m.raw_text.slice(0, t.textChars),
          })),
        },
      };
    },
    async activateWordingRule(req) {
      return { rule: toWordingRule(await activateRule(deps, req, () => reread.kick())) };
    },
    async retireWordingRule(req) {
      return { rule: toWordingRule(await retireRule(deps, req, () => reread.kick())) };
    },
  };
}

/** The texts no rule reads, grouped, and a rule proposed from one. */
function unknownWordingHandlers(deps: FlowDeps): Pick<Impl, "listUnknownWordings" | "proposeWordingRule"> {
  return {
    async listUnknownWordings(req) {
      const found = await listUnknown(deps, req);
      return {
        scanned: BigInt(found.scanned),
        truncated: found.truncated,
        groups: found.groups.map((g) => ({
          operator: g.operator,
          shape: g.shape,
          why: g.why,
          count: BigInt(g.count),
          simIds: g.simIds,
          firstSeen: ts(g.firstSeen),
          lastSeen: ts(g.lastSeen),
          sampleMessageId: g.sample.id,
          sampleText: g.sample.raw_text.slice(0, TEXT_CHARS),
          operationsWaiting: BigInt(g.operationsWaiting),
          moneyWaitingXaf: BigInt(g.moneyWaitingXaf),
          amountReadXaf: BigInt(g.amountReadXaf),
        })),
      };
    },
    async proposeWordingRule(req) {
      const p = await proposeRule(deps, req);
      return {
        proposal: {
          messageId: p.message.id,
          operator: p.operator,
          kind: opt(p.kind),
          language: p.language,
          direction: opt(p.direction),
          template: p.template,
          example: p.example,
          slots: p.slots.map((s) => ({ slot: s.slot, start: s.start, end: s.end, value: s.value })),
          problems: p.problems,
          reads: BigInt(p.reads.length),
          scanned: BigInt(p.scanned),
          readOtherwise: BigInt(p.reads.filter((r) => r.before.kind !== null).length),
          sample: p.reads.slice(0, TRIAL_SAMPLE).map((r) => {
            const m = p.textOf(r.message_id)!;
            return {
              messageId: m.id,
              simId: m.sim_id,
              receivedAt: ts(m.received_at),
              outcome: m.outcome,
              beforeKind: opt(m.kind),
              beforeRule: opt(m.parse_rule),
              kind: opt(r.after.kind),
              amount: big(r.after.amount),
              fee: big(r.after.fee),
              balanceAfter: big(r.after.balance_after),
              operatorRef: opt(r.after.operator_ref),
              counterpartyMsisdn: opt(r.after.counterparty_msisdn),
              counterpartyName: opt(r.after.counterparty_name),
              direction: opt(r.after.direction),
              text: m.raw_text.slice(0, TEXT_CHARS),
              rereadable: r.rereadable,
              moneyReceivedAsProof: r.money_received_as_proof,
            };
          }),
        },
      };
    },
  };
}
