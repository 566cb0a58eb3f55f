import { useState } from "preact/hooks";
import { api, call } from "../api.ts";
import { t } from "../i18n.ts";
import { dateTime } from "../format.ts";
import type { AuditEntry } from "../types.ts";
import { DataTable, Field, useLiveList } from "../ui.tsx";

// The audit log (admin): who did what to which subject, newest first, filtered by action
// (exact, or a prefix ending in *) and a day window; "older" pages back from the last entry
// shown. The server redacts secrets from the details; the page shows them as they come.
const PAGE = 50;

export function Audit() {
  const [filter, setFilter] = useState({ action: "", days: 30 });
  // The entry ids each page started before: the first page starts at the newest.
  const [pages, setPages] = useState<string[]>([]);
  const [names, setNames] = useState<Record<string, string>>({});
  const before = pages.at(-1);
  const list = useLiveList<AuditEntry>(
    async () => {
      const [entries, agents] = await Promise.all([
        call(() =>
          api.GET("/v1/audit", {
            params: {
              query: { limit: PAGE, days: filter.days, ...(filter.action ? { action: filter.action } : {}), before },
            },
          }),
        ),
        call(() => api.GET("/v1/agents/admin")),
      ]);
      if (agents.data) setNames(Object.fromEntries(agents.data.map((a) => [a.agent_id, a.full_name])));
      return entries;
    },
    (e) => e.entry_id,
    [],
    [filter.action, filter.days, before],
  );
  const last = list.rows.at(-1);
  return (
    <>
      <h2>{t("audit.title")}</h2>
      <AuditFilter
        onApply={(f) => {
          setPages([]);
          setFilter(f);
        }}
      />
      <DataTable
        list={list}
        caption={t("audit.title")}
        columns={[t("audit.at"), t("audit.actor"), t("audit.action"), t("audit.target"), t("audit.details")]}
        row={(e) => (
          <tr key={e.entry_id}>
            <th scope="row">{dateTime(e.at)}</th>
            <td>{e.actor_agent_id ? (names[e.actor_agent_id] ?? e.actor_agent_id) : t("audit.system")}</td>
            <td class="mono">{e.action}</td>
            <td class="mono">{e.target_id ?? ""}</td>
            <td class="mono">{JSON.stringify(e.details)}</td>
          </tr>
        )}
      />
      <p class="inline">
        {pages.length > 0 && (
          <button type="button" onClick={() => setPages([])}>
            {t("audit.newest")}
          </button>
        )}
        {last && list.rows.length >= PAGE && (
          <button type="button" onClick={() => setPages([...pages, last.entry_id])}>
            {t("audit.older")}
          </button>
        )}
      </p>
    </>
  );
}

/** The filter being typed: an action (exact, or a prefix ending in *) and a day window, applied on submit. */
function AuditFilter(props: { onApply: (filter: { action: string; days: number }) => void }) {
  const [action, setAction] = useState("");
  const [days, setDays] = useState(30);
  return (
    <form
      class="inline"
      aria-label={t("audit.title")}
      onSubmit={(e) => {
        e.preventDefault();
        props.onApply({ action: action.trim(), days });
      }}
    >
      <Field label={t("audit.filterAction")}>
        <input value={action} maxLength={100} onInput={(e) => setAction(e.currentTarget.value)} />
      </Field>
      <Field label={t("audit.days")}>
        <input
          type="number"
          min={1}
          max={365}
          value={days}
          onInput={(e) => setDays(Number(e.currentTarget.value) || 30)}
        />
      </Field>
      <button type="submit">{t("audit.apply")}</button>
    </form>
  );
}
