// A handset in the whole system with the network around it: the device and its SIMs
// (PINs and measured balances), the simulated operator that knows the SIMs and the customers,
// the operator's SMS sent to the system as the handset app forwards them, and the simulated
// handset that polls, dials and reports. Journeys and the fault table start from it.
//
//   const world = await handsetWorld(sys.api, sys.url, admin.token, {
//     label: "Journey handset",
//     sims: [{ operator: "operator_b", pin: "73915046" }],
//     balance: 500_000,
//     customers: { "690111222": "Marie-Claire Ngo" },
//     seed: 7,
//   });

import type { Api } from "./api.ts";
import { createSim, recordBalance, registerDevice, type Device, type Operator, type Sim } from "./fleet-fixtures.ts";
import { SimulatedHandset, SimulatedOperator } from "../simulator/index.ts";
import { OperatorSms } from "../simulator/operator-sms.ts";

export interface HandsetWorld {
  device: Device;
  /** In the order given, in slots 0 and 1. */
  sims: Sim[];
  operator: SimulatedOperator;
  handset: SimulatedHandset;
  sms: OperatorSms;
}

export async function handsetWorld(
  api: Api,
  baseUrl: string,
  adminToken: string,
  o: {
    label: string;
    sims: { operator: Operator; pin: string }[];
    /** The measured balance of each SIM, recorded in the system and held by the operator. */
    balance: number;
    /** MSISDN → name, as the operator's register reads them back. */
    customers: Record<string, string>;
    /** Seed of the SMS's references and timing. */
    seed: number;
    /** Whether the network's SMS reach the system now (default: always). */
    smsOn?: () => boolean;
  },
): Promise<HandsetWorld> {
  const device = await registerDevice(api, adminToken, o.label);
  const sims: Sim[] = [];
  const operator = new SimulatedOperator();
  for (const [slot, s] of o.sims.entries()) {
    const sim = await createSim(api, adminToken, {
      operator: s.operator,
      pin: s.pin,
      deviceId: device.deviceId,
      slot: slot as 0 | 1,
    });
    await recordBalance(api, sim.simId, o.balance);
    operator.registerSim(sim.msisdn, s.operator, { pin: s.pin, balance: o.balance });
    sims.push(sim);
  }
  for (const [msisdn, name] of Object.entries(o.customers)) operator.registerCustomer(msisdn, name);
  const sms = new OperatorSms({ baseUrl, token: device.token, seed: o.seed });
  const smsOn = o.smsOn ?? (() => true);
  const handset = new SimulatedHandset({
    baseUrl,
    token: device.token,
    operator,
    onDialled: (op, result) => (smsOn() ? sms.onDialled(op, result) : undefined),
  });
  await handset.refreshSims(false);
  return { device, sims, operator, handset, sms };
}
