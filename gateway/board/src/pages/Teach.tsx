import { useEffect, useState } from "preact/hooks";
import { api, call, currentSession, type Outcome } from "../api.ts";
import { known, t } from "../i18n.ts";
import { dateTime, fcfa } from "../format.ts";
import type { Operator } from "../rules.ts";
import type { UnknownWordingGroup, WordingProposal } from "../types.ts";
import { Answer, Empty, Field, ListHead, RowAction, Table, useHashItem, useLiveList } from "../ui.tsx";
import { KINDS } from "./Wording.tsx";

// Teaching the fleet's own wordings (admin): the texts no rule reads, or reads only partly,
// grouped by their shape, the groups with the most money and operations waiting first.
// Choosing a group proposes a rule from its newest text, its slots highlighted; the admin
// corrects the kind, the direction or the template, tries it (which stored texts it reads, and
// as what), and adds it as a draft. A rule that can confirm (DEP, BAL) is then activated by
// another admin, on the wording rules page.
type Kind = (typeof KINDS)[number];

/**
 * The rule proposed from a text, tried again as corrected, added as a draft and activated; each
 * step's outcome.
 */
function useProposal(reload: () => Promise<void>) {
  const [outcome, setOutcome] = useState<Outcome>();
  const [proposal, setProposal] = useState<WordingProposal>();
  const [added, setAdded] = useState<{ version_id: string; kind: string | null; created_by: string }>();
  const propose = async (body: {
    message_id: string;
    kind?: Kind | null;
    direction?: "in" | "out" | null;
    template?: string;
  }) => {
    const r = await call(() => api.POST("/v1/admin/wording-rules/proposals", { body }));
    if (r.outcome) return setOutcome(r.outcome);
    setProposal(r.data);
    setAdded(undefined);
    setOutcome({ ok: true, message: t("teach.proposed", { n: r.data.reads }) });
  };
  const add = async (p: WordingProposal) => {
    const r = await call(() =>
      api.POST("/v1/admin/wording-rules", {
        body: {
          operator: p.operator as Operator,
          kind: p.kind ?? null,
          language: p.language as "fr" | "en",
          direction: (p.direction ?? null) as "in" | "out" | null,
          template: p.template,
        },
      }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    setAdded(r.data);
    setOutcome({ ok: true, message: t("teach.added", { kind: r.data.kind ?? t("wr.anyKind") }) });
  };
  const activate = async (versionId: string) => {
    const r = await call(() =>
      api.POST("/v1/admin/wording-rules/{version_id}/activate", { params: { path: { version_id: versionId } } }),
    );
    if (r.outcome) return setOutcome(r.outcome);
    setOutcome({ ok: true, message: t("teach.activated") });
    setProposal(undefined);
    setAdded(undefined);
    await reload();
  };
  return { outcome, proposal, added, propose, add, activate };
}

export function Teach() {
  const list = useLiveList<UnknownWordingGroup>(
    async () => {
      const r = await call(() => api.GET("/v1/admin/unknown-wordings"));
      return r.data ? { data: r.data.groups } : r;
    },
    (g) => `${g.operator}/${g.why}/${g.shape}`,
    [],
    [],
  );

  const { outcome, proposal, added, propose, add, activate } = useProposal(() => list.reload());
  // A link to a text of a wording (the wording-change alert's, `#/teach/<message_id>`) opens
  // the rule proposed from it.
  const [linked] = useHashItem("teach");
  useEffect(() => {
    if (linked) void propose({ message_id: linked });
  }, [linked]);

  return (
    <section>
      <h2>{t("teach.title")}</h2>
      <p>{t("teach.why")}</p>
      <Answer outcome={outcome} />
      <ListHead list={list} />
      <GroupsTable rows={list.rows} onPropose={(id) => void propose({ message_id: id })} />
      <Empty rows={list.rows} />
      {proposal && (
        <ProposalForm
          key={`${proposal.message_id}/${proposal.template}`}
          proposal={proposal}
          added={added}
          onTry={(body) => void propose({ message_id: proposal.message_id, ...body })}
          onAdd={() => void add(proposal)}
          onActivate={(id) => void activate(id)}
        />
      )}
    </section>
  );
}

/** The example with each slot's value highlighted. */
function Highlighted({ proposal }: { proposal: WordingProposal }) {
  const parts: preact.JSX.Element[] = [];
  let at = 0;
  for (const s of proposal.slots) {
    if (s.start < at) continue;
    parts.push(<span key={`t${at}`}>{proposal.example.slice(at, s.start)}</span>);
    parts.push(
      <mark key={`s${s.start}`} class={`slot slot-${s.slot}`} title={`{${s.slot}}`} data-slot={s.slot}>
        {proposal.example.slice(s.start, s.end)}
      </mark>,
    );
    at = s.end;
  }
  parts.push(<span key="end">{proposal.example.slice(at)}</span>);
  return (
    <p class="mono" aria-label={t("teach.example")}>
      {parts}
    </p>
  );
}

function ProposalForm(props: {
  proposal: WordingProposal;
  added?: { version_id: string; kind: string | null; created_by: string };
  onTry: (body: { kind: Kind | null; direction: "in" | "out" | null; template: string }) => void;
  onAdd: () => void;
  onActivate: (versionId: string) => void;
}) {
  const { proposal: p, added } = props;
  const [kind, setKind] = useState(p.kind ?? "");
  const [direction, setDirection] = useState(p.direction ?? "");
  const [template, setTemplate] = useState(p.template);
  const changed = kind !== (p.kind ?? "") || direction !== (p.direction ?? "") || template !== p.template;
  return (
    <form
      aria-label={t("teach.proposal")}
      onSubmit={(e) => {
        e.preventDefault();
        props.onTry({
          kind: (kind || null) as Kind | null,
          direction: (direction || null) as "in" | "out" | null,
          template,
        });
      }}
    >
      <h3>{t("teach.proposal")}</h3>
      <Highlighted proposal={p} />
      <KindDirection kind={kind} setKind={setKind} direction={direction} setDirection={setDirection} />
      <Field label={t("wr.template")} hint={t("teach.slots")}>
        <textarea
          rows={3}
          maxLength={2000}
          required
          value={template}
          onInput={(e) => setTemplate(e.currentTarget.value)}
        />
      </Field>
      {p.problems.length > 0 && (
        <p class="error" role="alert">
          {p.problems.map((r) => t("teach.problem", { reason: reasonText(r) })).join(" ")}
        </p>
      )}
      <p>{t("teach.reads", { n: p.reads, otherwise: p.read_otherwise, scanned: p.scanned })}</p>
      <SampleTable sample={p.sample} />
      <ProposalButtons
        canAdd={!changed && p.problems.length === 0 && !added}
        added={added}
        onAdd={props.onAdd}
        onActivate={props.onActivate}
      />
    </form>
  );
}

/** The groups of texts no rule reads (or reads only partly), most money waiting first. */
function GroupsTable({ rows, onPropose }: { rows: UnknownWordingGroup[]; onPropose: (messageId: string) => void }) {
  return (
    <Table
      caption={t("teach.groups")}
      columns={[
        t("common.operator"),
        t("teach.reason"),
        { num: t("teach.count") },
        { num: t("teach.waiting") },
        { num: t("teach.money") },
        t("teach.seen"),
        t("teach.sample"),
        t("common.actions"),
      ]}
      tall
    >
      {rows.map((g) => (
        <tr key={`${g.operator}/${g.why}/${g.shape}`}>
          <th scope="row">{g.operator}</th>
          <td>{t(`teach.why.${g.why}` as "teach.why.unread")}</td>
          <td class="num">
            {g.count} <small>({t("teach.sims", { n: g.sim_ids.length })})</small>
          </td>
          <td class="num">{g.operations_waiting}</td>
          <td class="num">{fcfa(g.money_waiting_xaf)}</td>
          <td>
            {dateTime(g.first_seen)} – {dateTime(g.last_seen)}
          </td>
          <td class="mono">{g.sample_text}</td>
          <td class="actions">
            <RowAction
              label={t("teach.propose")}
              of={g.sample_message_id}
              onClick={() => onPropose(g.sample_message_id)}
            />
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** The proposed rule's kind and direction, as corrected. */
function KindDirection(p: {
  kind: string;
  setKind: (kind: string) => void;
  direction: string;
  setDirection: (direction: string) => void;
}) {
  return (
    <div class="inline">
      <Field label={t("wr.kind")}>
        <select value={p.kind} onChange={(e) => p.setKind(e.currentTarget.value)}>
          <option value="">{t("wr.anyKind")}</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t("msg.direction")}>
        <select value={p.direction} onChange={(e) => p.setDirection(e.currentTarget.value)}>
          <option value="">—</option>
          <option value="out">out</option>
          <option value="in">in</option>
        </select>
      </Field>
    </div>
  );
}

/** The stored texts the rule reads, what they were read as before and what they read as now. */
function SampleTable({ sample }: { sample: WordingProposal["sample"] }) {
  return (
    <Table
      caption={t("wr.sample")}
      columns={[
        t("wr.before"),
        t("wr.readAs"),
        { num: t("common.amount") },
        t("wr.ref"),
        t("wr.counterparty"),
        t("wr.text"),
      ]}
    >
      {sample.map((s) => (
        <tr key={s.message_id}>
          <th scope="row">{s.before_kind ?? s.before_rule ?? "—"}</th>
          <td>
            {s.kind ?? t("wr.anyKind")} {s.direction ?? ""}
          </td>
          <td class="num">{fcfa(s.amount)}</td>
          <td class="mono">{s.operator_ref ?? "—"}</td>
          <td>{[s.counterparty_msisdn, s.counterparty_name].filter(Boolean).join(" ") || "—"}</td>
          <td class="mono">{s.text}</td>
        </tr>
      ))}
    </Table>
  );
}

/**
 * Try, add (the rule as tried, without problems, once) and activate; a rule that can confirm
 * (DEP, BAL) is activated by another admin than the one who added it.
 */
function ProposalButtons(p: {
  canAdd: boolean;
  added?: { version_id: string; kind: string | null; created_by: string };
  onAdd: () => void;
  onActivate: (versionId: string) => void;
}) {
  const { added } = p;
  const secondAdmin =
    added && (added.kind === "DEP" || added.kind === "BAL") && added.created_by === currentSession()?.agentId;
  return (
    <div class="inline">
      <button type="submit">{t("wr.try")}</button>
      <button type="button" class="primary" disabled={!p.canAdd} onClick={p.onAdd}>
        {t("wr.add")}
      </button>
      {added &&
        (secondAdmin ? (
          <small>{t("wr.needsSecondAdmin")}</small>
        ) : (
          <button type="button" onClick={() => p.onActivate(added.version_id)}>
            {t("wr.activate")}
          </button>
        ))}
    </div>
  );
}

/** A template reason's text in the board's language (the reason itself when it has none). */
function reasonText(reason: string): string {
  const key = `r.${reason}`;
  return known(key) ? t(key) : reason;
}
