import { useState } from "preact/hooks";
import { api, call, currentSession, type Outcome } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime, fcfa } from "../format.ts";
import { MESSAGE_KINDS } from "../../../../services/evidence/src/domain/parsers/types.ts";
import { OPERATORS } from "../rules.ts";
import type { WordingRule, WordingTrial } from "../types.ts";
import { Answer, Badge, Confirm, Empty, Field, ListHead, RowAction, Table, useLiveList } from "../ui.tsx";

// The wording rules of the SMS parsers taught at run time (admin): every version, per
// operator; a form drafts a rule or a new version of one; "try" reads the stored messages
// nothing proved and shows what the version would read, changing nothing; activating and
// retiring each say first what they do (activation re-reads the operator's unmatched texts).
// The message kinds evidence knows (its parsers' own list, browser-safe); the server refuses
// any other (unknown_kind).
export const KINDS = MESSAGE_KINDS;
const SLOTS = "{amount} {fee} {balance} {ref} {phone} {name} {any}";
type Draft = {
  rule_id?: string;
  operator: string;
  kind: string;
  language: string;
  direction: string;
  template: string;
};
const EMPTY: Draft = { operator: "operator_b", kind: "DEP", language: "fr", direction: "out", template: "" };

/** How a version is named on its buttons and in the confirmations: kind, version, rule. */
const nameOf = (r: WordingRule) =>
  `${r.kind ?? t("wr.anyKind")} v${r.version} (${r.operator}, ${r.rule_id.slice(0, 8)})`;

/** Every version of every rule, the draft being written, the last trial, and what the page does to them. */
function useWordingRules() {
  const [outcome, setOutcome] = useState<Outcome>();
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [trial, setTrial] = useState<WordingTrial>();
  const [confirm, setConfirm] = useState<Confirming>();
  const list = useLiveList<WordingRule>(
    async () => {
      const r = await call(() => api.GET("/v1/admin/wording-rules"));
      return r.data ? { data: r.data.rules } : r;
    },
    (r) => r.version_id,
    [],
    [],
  );

  const add = async () => {
    const r = await call(() =>
      api.POST("/v1/admin/wording-rules", {
        body: {
          ...(draft.rule_id ? { rule_id: draft.rule_id } : {}),
          operator: draft.operator as (typeof OPERATORS)[number],
          kind: draft.kind || null,
          language: draft.language as "fr" | "en",
          direction: (draft.direction || null) as "in" | "out" | null,
          template: draft.template,
        },
      }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    setOutcome({ ok: true, message: t("wr.added", { name: nameOf(r.data) }) });
    setDraft(EMPTY);
    await list.reload();
  };
  const tryIt = async (rule: WordingRule) => {
    const r = await call(() =>
      api.POST("/v1/admin/wording-rules/{version_id}/try", { params: { path: { version_id: rule.version_id } } }),
    );
    setTrial(r.data);
    setOutcome(r.outcome ?? { ok: true, message: t("wr.tried", { name: nameOf(rule), n: r.data.reads }) });
  };
  const act = async (action: "activate" | "retire", rule: WordingRule): Promise<Outcome | undefined> => {
    const params = { params: { path: { version_id: rule.version_id } } };
    const r = await call(() =>
      action === "activate"
        ? api.POST("/v1/admin/wording-rules/{version_id}/activate", params)
        : api.POST("/v1/admin/wording-rules/{version_id}/retire", params),
    );
    if (r.outcome) return r.outcome;
    setOutcome({
      ok: true,
      message: t(action === "activate" ? "wr.activated" : "wr.retired", { name: nameOf(r.data) }),
    });
    setConfirm(undefined);
    await list.reload();
  };
  const activeOf = (rule: WordingRule) =>
    list.rows.find((r) => r.rule_id === rule.rule_id && r.state === "active" && r.version_id !== rule.version_id);
  return { outcome, draft, setDraft, trial, confirm, setConfirm, list, add, tryIt, act, activeOf };
}

/** An action on a version waiting for its confirmation. */
type Confirming = { action: "activate" | "retire"; rule: WordingRule };

/** One operator's rules, each version with what it reads and what may be done to it. */
function OperatorRules(p: RuleHandlers & { operator: string; all: WordingRule[] }) {
  const { operator } = p;
  const rows = p.all
    .filter((r) => r.operator === operator)
    .sort((a, b) => a.rule_id.localeCompare(b.rule_id) || b.version - a.version);
  return (
    <div>
      <h3>{operator}</h3>
      <Table
        caption={t("wr.rulesOf", { operator })}
        columns={[
          t("wr.version"),
          t("wr.kind"),
          t("wr.language"),
          t("msg.direction"),
          t("wr.template"),
          t("common.status"),
          t("wr.reread"),
          t("common.actions"),
        ]}
      >
        {rows.map((r) => (
          <tr key={r.version_id}>
            <th scope="row">
              {t("wr.versionOf", { version: r.version, rule: r.rule_id.slice(0, 8) })}
              <br />
              <small>{dateTime(r.created_at)}</small>
            </th>
            <td>{r.kind ?? t("wr.anyKind")}</td>
            <td>{r.language}</td>
            <td>{r.direction ?? "—"}</td>
            <td class="mono">{r.template}</td>
            <td>
              <Badge state={r.state} />
            </td>
            <td>
              {r.reread_state === "none"
                ? "—"
                : t("wr.rereadOf", {
                    state: r.reread_state,
                    messages: r.reread_messages,
                    confirmed: r.reread_confirmed,
                  })}
            </td>
            <RuleActions r={r} {...p} />
          </tr>
        ))}
      </Table>
      <Empty rows={rows} />
    </div>
  );
}

/** What may be done to a version: try, activate (another admin, for a rule that can confirm), retire, new version. */
function RuleActions({ r, ...p }: RuleHandlers & { r: WordingRule }) {
  return (
    <td class="actions">
      <RowAction label={t("wr.try")} of={nameOf(r)} onClick={() => p.onTry(r)} />
      {r.state === "draft" &&
        (needsAnotherAdmin(r) ? (
          <small>{t("wr.needsSecondAdmin")}</small>
        ) : (
          <RowAction
            label={t("wr.activate")}
            of={nameOf(r)}
            onClick={() => p.onConfirm({ action: "activate", rule: r })}
          />
        ))}
      {r.state !== "retired" && (
        <RowAction label={t("wr.retire")} of={nameOf(r)} onClick={() => p.onConfirm({ action: "retire", rule: r })} />
      )}
      <RowAction
        label={t("wr.newVersion")}
        of={nameOf(r)}
        onClick={() =>
          p.onNewVersion({
            rule_id: r.rule_id,
            operator: r.operator,
            kind: r.kind ?? "",
            language: r.language,
            direction: r.direction ?? "",
            template: r.template,
          })
        }
      />
    </td>
  );
}

/** What the row actions call. */
interface RuleHandlers {
  onTry: (r: WordingRule) => void;
  onConfirm: (c: Confirming) => void;
  onNewVersion: (d: Draft) => void;
}

/** Says what activating (and which version it replaces) or retiring does, then does it. */
function ConfirmRule(p: {
  confirm: Confirming;
  active?: WordingRule;
  run: () => Promise<Outcome | undefined>;
  onClose: () => void;
}) {
  const { confirm } = p;
  return (
    <Confirm
      title={t(confirm.action === "activate" ? "wr.activateTitle" : "wr.retireTitle", {
        name: nameOf(confirm.rule),
      })}
      confirm={t(confirm.action === "activate" ? "wr.activateConfirm" : "wr.retireConfirm")}
      run={p.run}
      onClose={p.onClose}
    >
      <p>
        {confirm.action === "activate"
          ? t("wr.activateWhat", {
              name: nameOf(confirm.rule),
              operator: confirm.rule.operator,
              previous: p.active ? t("wr.replaces", { version: p.active.version }) : "",
            })
          : t("wr.retireWhat", { name: nameOf(confirm.rule) })}
      </p>
      <p class="mono">{confirm.rule.template}</p>
    </Confirm>
  );
}

/** A trial's counts: scanned, read, read otherwise, and what the reads would do. */
function TrialFacts({ trial }: { trial: WordingTrial }) {
  return (
    <dl class="facts">
      <dt>{t("wr.scanned")}</dt>
      <dd>
        {trial.scanned}
        {trial.truncated && ` ${t("wr.truncated")}`}
      </dd>
      <dt>{t("wr.reads")}</dt>
      <dd>{trial.reads}</dd>
      <dt>{t("wr.readOtherwise")}</dt>
      <dd>{trial.read_otherwise}</dd>
      <dt>{t("wr.moneyReceived")}</dt>
      <dd>{trial.money_received}</dd>
      <dt>{t("wr.orphans")}</dt>
      <dd>{trial.orphans}</dd>
      <dt>{t("wr.stored")}</dt>
      <dd>{trial.stored}</dd>
      <dt>{t("wr.notCorrelated")}</dt>
      <dd>{trial.not_correlated}</dd>
    </dl>
  );
}

export function Wording() {
  const { outcome, draft, setDraft, trial, confirm, setConfirm, list, add, tryIt, act, activeOf } = useWordingRules();

  return (
    <section>
      <h2>{t("wr.title")}</h2>
      <p>{t("wr.why")}</p>
      <Answer outcome={outcome} />
      <ListHead list={list} />
      {OPERATORS.map((operator) => (
        <OperatorRules
          key={operator}
          operator={operator}
          all={list.rows}
          onTry={(r) => void tryIt(r)}
          onConfirm={setConfirm}
          onNewVersion={setDraft}
        />
      ))}
      {trial && <Trial trial={trial} />}
      <DraftForm draft={draft} setDraft={setDraft} onSubmit={() => void add()} />
      {confirm && (
        <ConfirmRule
          confirm={confirm}
          active={activeOf(confirm.rule)}
          run={() => act(confirm.action, confirm.rule)}
          onClose={() => setConfirm(undefined)}
        />
      )}
    </section>
  );
}

/** What a version would read: counts by stored outcome and by kind, and the newest reads. */
function Trial({ trial }: { trial: WordingTrial }) {
  const kinds = Object.entries(trial.by_kind);
  return (
    <section aria-labelledby="trial-title">
      <h3 id="trial-title">{t("wr.trialOf", { name: trial.rule ? nameOf(trial.rule) : "" })}</h3>
      <TrialFacts trial={trial} />
      <Table caption={t("wr.byKind")} columns={[t("wr.kind"), { num: t("wr.reads") }]}>
        {kinds.map(([kind, n]) => (
          <tr key={kind}>
            <th scope="row">{kind || t("wr.anyKind")}</th>
            <td class="num">{n}</td>
          </tr>
        ))}
      </Table>
      <Empty rows={kinds} />
      <Table
        caption={t("wr.sample")}
        columns={[
          t("common.received"),
          t("common.status"),
          t("wr.before"),
          t("wr.readAs"),
          { num: t("common.amount") },
          { num: t("wr.fee") },
          { num: t("wr.balance") },
          t("wr.ref"),
          t("wr.counterparty"),
          t("wr.text"),
        ]}
        tall
      >
        {trial.sample.map((s) => (
          <tr key={s.message_id}>
            <th scope="row">{dateTime(s.received_at)}</th>
            <td>{s.outcome}</td>
            <td>
              {s.before_kind ?? s.before_rule ?? "—"}
              {s.money_received_as_proof && <strong> ({t("wr.asProof")})</strong>}
            </td>
            <td>
              {s.kind ?? t("wr.anyKind")} {s.direction ?? ""}
            </td>
            <td class="num">{fcfa(s.amount)}</td>
            <td class="num">{fcfa(s.fee)}</td>
            <td class="num">{fcfa(s.balance_after)}</td>
            <td class="mono">{s.operator_ref ?? "—"}</td>
            <td>{[s.counterparty_msisdn, s.counterparty_name].filter(Boolean).join(" ") || "—"}</td>
            <td class="mono">{s.text}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function DraftForm(props: { draft: Draft; setDraft: (d: Draft) => void; onSubmit: () => void }) {
  const { draft, setDraft } = props;
  const set = (k: keyof Draft) => (e: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [k]: e.currentTarget.value });
  return (
    <form
      aria-label={t("wr.draft")}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      <h3>{draft.rule_id ? t("wr.draftVersion", { rule: draft.rule_id.slice(0, 8) }) : t("wr.draft")}</h3>
      {draft.rule_id && (
        <button type="button" onClick={() => setDraft({ ...draft, rule_id: undefined })}>
          {t("wr.asNewRule")}
        </button>
      )}
      <div class="inline">
        <Field label={t("common.operator")}>
          <select value={draft.operator} disabled={!!draft.rule_id} onChange={set("operator")}>
            {OPERATORS.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t("wr.kind")}>
          <select value={draft.kind} onChange={set("kind")}>
            <option value="">{t("wr.anyKind")}</option>
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t("wr.language")}>
          <select value={draft.language} onChange={set("language")}>
            <option value="fr">fr</option>
            <option value="en">en</option>
          </select>
        </Field>
        <Field label={t("msg.direction")}>
          <select value={draft.direction} onChange={set("direction")}>
            <option value="">—</option>
            <option value="out">out</option>
            <option value="in">in</option>
          </select>
        </Field>
      </div>
      <Field label={t("wr.template")} hint={t("wr.slots", { slots: SLOTS })}>
        <textarea rows={3} maxLength={2000} required value={draft.template} onInput={set("template")} />
      </Field>
      <button type="submit" class="primary">
        {t("wr.add")}
      </button>
    </form>
  );
}

/**
 * A rule that can confirm (DEP, BAL) is activated by an admin other than its author: its
 * author is told so instead of being offered the button (the API refuses it with 403).
 */
function needsAnotherAdmin(r: WordingRule): boolean {
  return (r.kind === "DEP" || r.kind === "BAL") && r.created_by === currentSession()?.agentId;
}
