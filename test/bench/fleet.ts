// Shared by the benchmarks: a handset and its SIM registered through the API, as an admin does.
import { call } from "./http.ts";

export interface BenchHandset {
  deviceId: string;
  token: string;
  simId: string;
  msisdn: string;
}

/**
 * Registers a handset (`label`) and an operator_b SIM on it (`msisdn`, `pin`, slot 0), then
 * sets the SIM's balance (`balance`, through `key`) when one is given. Throws on a refusal.
 */
export async function addHandset(
  base: string,
  admin: Record<string, string>,
  handset: { label: string; msisdn: string; pin: string },
  balance?: { key: Record<string, string>; amount: number },
): Promise<BenchHandset> {
  const d = await call(base, "POST", "/v1/devices", admin, { label: handset.label });
  if (d.status !== 201) throw new Error(`device not registered: ${d.status} ${JSON.stringify(d.body)}`);
  const sim = await call(base, "POST", "/v1/sims", admin, {
    operator: "operator_b",
    msisdn: handset.msisdn,
    pin: handset.pin,
    device_id: d.body.device_id,
    subscription_slot: "0",
  });
  if (sim.status !== 201) throw new Error(`SIM not created: ${sim.status} ${JSON.stringify(sim.body)}`);
  if (balance) {
    const set = await call(base, "PATCH", `/v1/sims/${sim.body.sim_id}/balance`, balance.key, {
      balance: balance.amount,
    });
    if (set.status !== 200) throw new Error(`balance not set: ${set.status} ${JSON.stringify(set.body)}`);
  }
  return { deviceId: d.body.device_id, token: d.body.device_token, simId: sim.body.sim_id, msisdn: handset.msisdn };
}
