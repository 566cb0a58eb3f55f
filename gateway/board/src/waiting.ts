import { useEffect, useState } from "preact/hooks";
import { api, call } from "./api.ts";
import { onHint, type HintKind } from "./live.ts";

// What waits for someone, counted for the menu: pending transactions, unproven operations, SMS
// that prove nothing yet, and (for an admin) open alerts. Each count is the length of the list
// its page shows, read with the same query (so the two always agree, up to the list's limit),
// and read again when a live hint of its kind arrives or the stream (re)connects.

export type WaitingPage = "transactions" | "arbitration" | "messages" | "alerts";

interface Counter {
  kind: HintKind;
  limit: number;
  admin?: boolean;
  read: () => Promise<{ data?: unknown[] }>;
}

const COUNTERS: Record<WaitingPage, Counter> = {
  transactions: {
    kind: "transaction",
    limit: 250,
    read: () => call(() => api.GET("/v1/transactions", { params: { query: { state: "pending", limit: 250 } } })),
  },
  arbitration: {
    kind: "operation",
    limit: 250,
    read: () => call(() => api.GET("/v1/operations/unproven", { params: { query: { limit: 250, all: "true" } } })),
  },
  messages: {
    kind: "message",
    limit: 250,
    read: () =>
      call(() => api.GET("/v1/evidences", { params: { query: { unmatched: "true", all: "true", limit: 250 } } })),
  },
  alerts: {
    kind: "alert",
    limit: 100,
    admin: true,
    read: () =>
      call(() => api.GET("/v1/admin/notifications", { params: { query: { acknowledged: "false", limit: 100 } } })),
  },
};

/** A count as the menu shows it: the list's limit reached reads "250+". */
export interface Waiting {
  n: number;
  atLimit: boolean;
}

/** The counts for the menu while `active` (signed in); a count that fails to load keeps its last value. */
export function useWaiting(role: string, active: boolean): Partial<Record<WaitingPage, Waiting>> {
  const [counts, setCounts] = useState<Partial<Record<WaitingPage, Waiting>>>({});
  useEffect(() => {
    if (!active) return setCounts({});
    let live = true;
    const timers = new Map<WaitingPage, ReturnType<typeof setTimeout>>();
    const pages = (Object.keys(COUNTERS) as WaitingPage[]).filter((p) => !COUNTERS[p].admin || role === "admin");
    const refresh = (page: WaitingPage) => {
      // A burst of hints is one read, half a second after the first.
      if (timers.has(page)) return;
      timers.set(
        page,
        setTimeout(() => {
          timers.delete(page);
          void COUNTERS[page].read().then((r) => {
            if (!live || !r.data) return;
            const n = r.data.length;
            setCounts((c) => ({ ...c, [page]: { n, atLimit: n >= COUNTERS[page].limit } }));
          });
        }, 500),
      );
    };
    for (const p of pages) refresh(p);
    const off = onHint((h) => {
      for (const p of pages) if (h === "refetch" || COUNTERS[p].kind === h.kind) refresh(p);
    });
    return () => {
      live = false;
      off();
      for (const timer of timers.values()) clearTimeout(timer);
    };
  }, [role, active]);
  return counts;
}
