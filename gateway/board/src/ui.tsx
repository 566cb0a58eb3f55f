import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { transient, type Outcome } from "./api.ts";
import { t } from "./i18n.ts";
import { status, time } from "./format.ts";
import { liveMode, onHint, onMode, POLL_S, type HintKind, type LiveMode } from "./live.ts";

/** The API's answer to the last action: read out by screen readers (aria-live). */
export function Answer({ outcome }: { outcome?: Outcome }) {
  return (
    <div class="answer" aria-live="polite" role="status">
      {outcome &&
        (outcome.ok ? (
          <p class="ok">{outcome.message}</p>
        ) : (
          <p class="refused">
            <strong>{outcome.title}</strong>
            {outcome.detail && <span class="detail">{outcome.detail}</span>}
          </p>
        ))}
    </div>
  );
}

/** A native modal dialog, open while mounted; Escape or the close button call `onClose`. */
export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const close = () => props.onClose();
    d.addEventListener("close", close);
    return () => d.removeEventListener("close", close);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title">
      <header class="dialog-head">
        <h2 id="dialog-title">{props.title}</h2>
        <button type="button" onClick={() => ref.current?.close()}>
          {t("common.close")}
        </button>
      </header>
      {props.children}
    </dialog>
  );
}

/**
 * The item a page shows in its detail dialog, at a URL of its own (`#/operations/<id>`): a link
 * sent to a colleague opens it, a reload keeps it open, the browser's back button closes it.
 */
/** The hash's page and item: `#/operations/<id>` is ["operations", "<id>"]. */
export function hashPath(): [string, string | undefined] {
  const [name = "", id] = location.hash.replace(/^#\/?/, "").split("/");
  return [name, id ? decodeURIComponent(id) : undefined];
}

export function useHashItem(page: string): [string | undefined, (id: string | undefined) => void] {
  const read = () => {
    const [name, id] = hashPath();
    return name === page ? id : undefined;
  };
  const [id, setId] = useState(read);
  useEffect(() => {
    const onHash = () => setId(read());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  const open = (next: string | undefined) => {
    const hash = next ? `#/${page}/${encodeURIComponent(next)}` : `#/${page}`;
    // A dialog's close event comes a task after its close(): by then the person may have gone
    // to another page, which closing must not undo.
    const here = hashPath()[0] === page;
    if (location.hash !== hash && (next !== undefined || here)) location.hash = hash;
    setId(next);
  };
  return [id, open];
}

export function useLiveMode(): LiveMode {
  const [mode, setMode] = useState(liveMode());
  useEffect(() => onMode(setMode), []);
  return mode;
}

/**
 * How fresh the list on screen is, and whether it follows live hints or polls; `stale` when
 * its last fetch failed (it is being tried again): what shows is then not live, whatever the
 * stream says.
 */
export function Freshness({ at, stale }: { at?: Date; stale?: boolean }) {
  const mode = useLiveMode();
  if (stale)
    return (
      <p class="freshness stale">
        <span class="dot" aria-hidden="true" />
        {at ? t("live.stale", { time: time(at) }) : t("live.staleNever")}
      </p>
    );
  const state =
    mode === "live"
      ? t("live.connected")
      : mode === "polling"
        ? t("live.polling", { s: POLL_S })
        : t("live.connecting");
  return (
    <p class={`freshness ${mode}`}>
      <span class="dot" aria-hidden="true" />
      {state}
      {at && <> · {t("live.fresh", { time: time(at) })}</>}
    </p>
  );
}

/** Waits before fetching a list again after a failure: 1 s, 2 s, 4 s… up to 30 s. */
export const retryDelayMs = (attempt: number): number => Math.min(30_000, 1000 * 2 ** Math.min(attempt, 5));

export interface LiveList<T> {
  rows: T[];
  /** Rows that appeared since the user last looked, held back so the list does not jump. */
  held: number;
  showHeld(): void;
  reload(): Promise<void>;
  fetchedAt?: Date;
  error?: Outcome;
  /** The last fetch failed: the rows shown may be out of date until one succeeds. */
  stale: boolean;
  loading: boolean;
}

/**
 * The rows a live list shows: all at once, or those on screen updated in place (rows that left
 * removed) with the new ones held until the user asks for them.
 */
function useShownRows<T>(idOf: (row: T) => string) {
  const [rows, setRows] = useState<T[]>([]);
  const [latest, setLatest] = useState<T[] | undefined>();
  const [held, setHeld] = useState(0);
  const shown = useRef<T[]>([]);
  const showAll = (fresh: T[]) => {
    shown.current = fresh;
    setRows(fresh);
    setLatest(undefined);
    setHeld(0);
  };
  const update = (fresh: T[]) => {
    const byId = new Map(fresh.map((row) => [idOf(row), row]));
    const kept = shown.current.filter((row) => byId.has(idOf(row))).map((row) => byId.get(idOf(row))!);
    shown.current = kept;
    setRows(kept);
    setLatest(kept.length === fresh.length ? undefined : fresh);
    setHeld(fresh.length - kept.length);
  };
  const showHeld = () => {
    if (latest) showAll(latest);
  };
  return { rows, held, shown, showAll, update, showHeld };
}

/**
 * A list that follows live hints of the given kinds: rows on screen are updated in place,
 * rows that left are removed, new rows are held behind a "N new — show" button; a reload
 * the user asked for (or a filter change) shows everything at once. A fetch that fails for a
 * reason that may heal (no answer, 5xx, 429) is tried again with back-off until one succeeds;
 * meanwhile the list says it is stale.
 */
export function useLiveList<T>(
  load: () => Promise<{ data?: T[]; outcome?: Outcome }>,
  idOf: (row: T) => string,
  kinds: HintKind[],
  deps: unknown[],
): LiveList<T> {
  const shownRows = useShownRows(idOf);
  const [fetchedAt, setFetchedAt] = useState<Date>();
  const [error, setError] = useState<Outcome>();
  const [loading, setLoading] = useState(true);
  const [stale, setStale] = useState(false);
  const generation = useRef(0);
  const retry = useRef<{ timer?: ReturnType<typeof setTimeout>; attempts: number }>({ attempts: 0 });

  const fetchRows = useCallback(async (mode: "all" | "hold"): Promise<void> => {
    const g = ++generation.current;
    const r = await load();
    if (g !== generation.current) return;
    setLoading(false);
    clearTimeout(retry.current.timer);
    retry.current.timer = undefined;
    if (!r.data) {
      setError(r.outcome);
      setStale(true);
      if (transient(r.outcome)) {
        const wait = retryDelayMs(retry.current.attempts++);
        retry.current.timer = setTimeout(() => void fetchRows(mode), wait);
      }
      return;
    }
    retry.current.attempts = 0;
    setError(undefined);
    setStale(false);
    setFetchedAt(new Date());
    if (mode === "all" || shownRows.shown.current.length === 0) shownRows.showAll(r.data);
    else shownRows.update(r.data);
  }, deps);

  useEffect(() => {
    shownRows.shown.current = [];
    setLoading(true);
    void fetchRows("all");
    const off = onHint((h) => {
      if (h === "refetch" || kinds.includes(h.kind)) void fetchRows("hold");
    });
    return () => {
      off();
      // A retry pending for these deps (or a page left) is dropped with them.
      generation.current++;
      clearTimeout(retry.current.timer);
      retry.current = { attempts: 0 };
    };
  }, [fetchRows]);

  return {
    rows: shownRows.rows,
    held: shownRows.held,
    showHeld: shownRows.showHeld,
    reload: () => fetchRows("all"),
    fetchedAt,
    error,
    stale,
    loading,
  };
}

/** The head of a list: freshness, the held rows' button, the refusal if the load failed. */
export function ListHead<T>({ list }: { list: LiveList<T> }) {
  return (
    <div class="list-head">
      <Freshness at={list.fetchedAt} stale={list.stale} />
      {list.held > 0 && (
        <button type="button" class="held" onClick={list.showHeld}>
          {t("live.newItems", { n: list.held })}
        </button>
      )}
      <button type="button" onClick={() => void list.reload()}>
        {t("common.refresh")}
      </button>
      {list.error && <Answer outcome={list.error} />}
      {list.loading && <p>{t("common.loading")}</p>}
    </div>
  );
}

/** A column's header: its label, or the label of a column of figures (right-aligned). */
export type Column = string | { num: string };

/** A native table: a caption for screen readers, column headers, the rows given (each a keyed `<tr>`). */
export function Table(props: { caption: string; columns: Column[]; children: ComponentChildren; tall?: boolean }) {
  // The table scrolls in its own box (sideways on a phone, down when tall), which the
  // keyboard can then reach and scroll.
  return (
    <div class={props.tall ? "table-wrap tall" : "table-wrap"} tabIndex={0} role="region" aria-label={props.caption}>
      <table>
        <caption class="sr-only">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((c) =>
              typeof c === "string" ? (
                <th scope="col">{c}</th>
              ) : (
                <th scope="col" class="num">
                  {c.num}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * A live list as a native table: its head, the table, one row per item (`row` returns the
 * `<tr>`, keyed), and "none" when the list is empty.
 */
export function DataTable<T>(props: {
  list: LiveList<T>;
  caption: string;
  columns: Column[];
  row: (item: T) => ComponentChildren;
}) {
  const { list } = props;
  return (
    <>
      <ListHead list={list} />
      <Table caption={props.caption} columns={props.columns}>
        {list.rows.map(props.row)}
      </Table>
      <Empty rows={list.rows} />
    </>
  );
}

/** A button acting on one row: its accessible name says which row, as its text alone repeats down the column. */
export function RowAction(props: { label: string; of: string; onClick: () => void }) {
  return (
    <button type="button" aria-label={`${props.label} ${props.of}`} onClick={props.onClick}>
      {props.label}
    </button>
  );
}

export function Field(props: { label: string; error?: string; children: ComponentChildren; hint?: string }) {
  return (
    <label class={props.error ? "field invalid" : "field"}>
      <span>{props.label}</span>
      {props.children}
      {props.hint && <small>{props.hint}</small>}
      {props.error && <small class="error">{props.error}</small>}
    </label>
  );
}

/**
 * A confirmation step: says exactly what the action will do before doing it. `run` returns
 * the refusal to show, or nothing when it is done (the caller closes the dialog).
 */
export function Confirm(props: {
  title: string;
  children: ComponentChildren;
  confirm: string;
  run: () => Promise<Outcome | undefined>;
  onClose: () => void;
}) {
  const [outcome, setOutcome] = useState<Outcome>();
  const [busy, setBusy] = useState(false);
  const go = async () => {
    setBusy(true);
    setOutcome(await props.run());
    setBusy(false);
  };
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      {props.children}
      <button type="button" class="primary" disabled={busy} onClick={() => void go()}>
        {props.confirm}
      </button>
      <Answer outcome={outcome} />
    </Dialog>
  );
}

/** A state in words, on a badge whose class gives its colour. */
export function Badge({ state }: { state: string }) {
  return <span class={`badge ${state}`}>{status(state)}</span>;
}

export function Empty({ rows }: { rows: unknown[] }) {
  return rows.length === 0 ? <p class="empty">{t("common.none")}</p> : null;
}

/** A secret shown once (a handset's token, a temporary password): the server keeps only its hash. */
export function Once(props: { text: string; secret: string; done: string; onDone: () => void }) {
  return (
    <div class="once" role="alert">
      <p>{props.text}</p>
      <p>
        <code>{props.secret}</code>
      </p>
      <button type="button" onClick={props.onDone}>
        {props.done}
      </button>
    </div>
  );
}
