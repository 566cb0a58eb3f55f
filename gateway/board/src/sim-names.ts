import { useEffect, useState } from "preact/hooks";
import { api, call, currentSession } from "./api.ts";

/** How a SIM is named for people: its number, then its handset where known; its id's first 8 characters otherwise. */
export type SimName = (simId: string | null | undefined) => string;

/**
 * The SIMs' names as people use them. An admin reads every SIM (`GET /v1/sims`); an agent the SIMs
 * of its grant (`GET /v1/agents/me/sims`, with their handsets), the only numbers it may see: a SIM
 * outside them keeps its short id.
 */
export function useSimNames(): SimName {
  const [names, setNames] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    const load = async (): Promise<[string, string][]> => {
      if (currentSession()?.role === "admin") {
        const r = await call(() => api.GET("/v1/sims"));
        return (r.data ?? []).map((s) => [s.sim_id, s.msisdn]);
      }
      const r = await call(() => api.GET("/v1/agents/me/sims"));
      return (r.data ?? []).map((s) => [s.sim_id, s.device_label ? `${s.msisdn} · ${s.device_label}` : s.msisdn]);
    };
    void load().then((entries) => setNames(new Map(entries)));
  }, []);
  return (simId) => (simId ? (names.get(simId) ?? simId.slice(0, 8)) : "—");
}
