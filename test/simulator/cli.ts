// The handset simulator as a command: polls a running gateway like the handset app,
// dials against a simulated operator and reports outcomes.
//
//   With a device token:
//     npx tsx test/simulator/cli.ts --url http://127.0.0.1:8080 --token tod_... --pin 4826
//   Registering a handset with an admin session token (and, optionally, SIMs in it):
//     npx tsx test/simulator/cli.ts --url http://127.0.0.1:8080 --admin-token tos_... --label "Sim 1" \
//       --create-sim operator_b:4826 --create-sim operator_a:1357 --api-key local-dev-api-key --balance 500000
//
// Options:
//   --interval-ms N      poll period (default 4000)
//   --duration-s N       stop after N seconds (default: run until Ctrl-C)
//   --pin P              PIN of every SIM (otherwise the first PIN presented is adopted)
//   --pins id=P,id=P     PIN per SIM id
//   --balance N          starting wallet of each SIM at the simulated operator (default: fleet's mirror)
//   --fail OUTCOME       fail every operation this way: ussd_timeout, no_service, sim_absent,
//                        name_mismatch, ussd_failed, ussd_unconfirmed
//   --fail-rate R        fail only this share of operations (0..1, default 1 when --fail is given)
//   --after-pin          with --fail ussd_timeout: the PIN (and the money) went through first
//
// Nothing the simulator prints contains a PIN or the USSD steps.

import { parseArgs } from "node:util";
import { SimulatedHandset, type FailureMode } from "./handset.ts";
import { SimulatedOperator, type OperatorName } from "./operator.ts";

const OUTCOMES = [
  "ussd_timeout",
  "no_service",
  "sim_absent",
  "name_mismatch",
  "ussd_failed",
  "ussd_unconfirmed",
] as const;

const { values } = parseArgs({
  options: {
    url: { type: "string", default: "http://127.0.0.1:8080" },
    token: { type: "string" },
    "admin-token": { type: "string" },
    "api-key": { type: "string" },
    label: { type: "string", default: "Simulated handset" },
    "create-sim": { type: "string", multiple: true },
    "interval-ms": { type: "string", default: "4000" },
    "duration-s": { type: "string" },
    pin: { type: "string" },
    pins: { type: "string" },
    balance: { type: "string" },
    fail: { type: "string" },
    "fail-rate": { type: "string" },
    "after-pin": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});

function usage(message?: string): never {
  if (message) console.error(message);
  console.error(
    "usage: npx tsx test/simulator/cli.ts --url URL (--token DEVICE_TOKEN | --admin-token SESSION_TOKEN) [options]",
  );
  process.exit(message ? 2 : 0);
}

async function http(
  method: string,
  path: string,
  auth: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(values.url + path, {
    method,
    headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Registers a handset (and its SIMs) with an admin token; returns the device token. */
async function register(adminToken: string): Promise<{ token: string; pins: Map<string, string> }> {
  const admin = { authorization: `Bearer ${adminToken}` };
  const device = await http("POST", "/v1/devices", admin, { label: values.label });
  if (device.status !== 201) usage(`registering the handset failed: ${device.status} ${JSON.stringify(device.body)}`);
  console.log(`registered handset ${device.body.device_id} (${values.label})`);
  const pins = new Map<string, string>();
  for (const [slot, spec] of (values["create-sim"] ?? []).entries()) {
    const [operator, pin = "4826"] = spec.split(":");
    const msisdn = `${operator === "operator_a" ? "67" : "69"}${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    const sim = await http("POST", "/v1/sims", admin, {
      operator,
      msisdn,
      pin,
      device_id: device.body.device_id,
      subscription_slot: String(slot),
    });
    if (sim.status !== 201) usage(`creating the SIM failed: ${sim.status} ${JSON.stringify(sim.body)}`);
    pins.set(sim.body.sim_id, pin);
    console.log(`  SIM ${sim.body.sim_id} ${operator} ${msisdn} in slot ${slot}`);
    if (values["api-key"] && values.balance) {
      const bal = await http(
        "PATCH",
        `/v1/sims/${sim.body.sim_id}/balance`,
        { "x-api-key": values["api-key"] },
        { balance: Number(values.balance) },
      );
      if (bal.status !== 200) console.error(`  recording the balance failed: ${bal.status}`);
    }
  }
  return { token: device.body.device_token, pins };
}

async function main(): Promise<void> {
  if (values.help) usage();
  if (!values.token && !values["admin-token"]) usage("give --token or --admin-token");
  if (values.fail && !(OUTCOMES as readonly string[]).includes(values.fail))
    usage(`--fail must be one of ${OUTCOMES.join(", ")}`);
  const registered = values.token
    ? { token: values.token, pins: new Map<string, string>() }
    : await register(values["admin-token"]!);
  for (const pair of (values.pins ?? "").split(",").filter(Boolean)) {
    const [simId, pin] = pair.split("=");
    registered.pins.set(simId, pin);
  }
  const operator = new SimulatedOperator();
  const failRate = values["fail-rate"] === undefined ? 1 : Number(values["fail-rate"]);
  const failure: FailureMode | undefined = values.fail
    ? values.fail === "ussd_timeout"
      ? { outcome: "ussd_timeout", afterPin: values["after-pin"] }
      : { outcome: values.fail as Exclude<FailureMode["outcome"], "ussd_timeout"> }
    : undefined;
  const handset = new SimulatedHandset({
    baseUrl: values.url!,
    token: registered.token,
    operator,
    failWith: () => (failure && Math.random() < failRate ? failure : undefined),
  });
  await handset.refreshSims(false);
  const sims = await http("GET", "/v1/device/sims", { authorization: `Bearer ${registered.token}` });
  for (const s of sims.body as { sim_id: string; msisdn: string; operator: OperatorName; balance: number | null }[]) {
    const pin = registered.pins.get(s.sim_id) ?? values.pin;
    operator.registerSim(s.msisdn, s.operator, {
      pin,
      balance: values.balance ? Number(values.balance) : (s.balance ?? 0),
    });
    console.log(
      `SIM ${s.sim_id} ${s.operator} ${s.msisdn}: wallet ${operator.balanceOf(s.msisdn)} FCFA${pin ? "" : " (PIN adopted on first use)"}`,
    );
  }
  const stop = new AbortController();
  process.on("SIGINT", () => stop.abort());
  process.on("SIGTERM", () => stop.abort());
  if (values["duration-s"]) setTimeout(() => stop.abort(), Number(values["duration-s"]) * 1000).unref();
  console.log(`polling ${values.url}/v1/device/next every ${values["interval-ms"]} ms`);
  let idle = 0;
  await handset.run({
    intervalMs: Number(values["interval-ms"]),
    signal: stop.signal,
    onPoll: (r) => {
      if (r.status === 204) {
        idle += 1;
        return;
      }
      if (r.status === 200 && r.operation && r.result) {
        const op = r.operation;
        console.log(
          `${new Date().toISOString()} ${op.operation_id} ${op.op_type} ${op.montant} FCFA to ${op.msisdn_dest} on ${op.sim_id}: ${r.result.outcome} -> ${r.report?.status} ${r.report?.body?.status ?? ""}`,
        );
        return;
      }
      console.log(`${new Date().toISOString()} poll answered ${r.status} ${r.body ? JSON.stringify(r.body) : ""}`);
    },
  });
  console.log(`stopped after ${handset.dialled.length} operations and ${idle} idle polls`);
}

await main();
