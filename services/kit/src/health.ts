import type { ConnectRouter } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "./gen/grpc/health/v1/health_pb.ts";

/** How long a probe's answer stands for the checks that follow it. */
const PROBE_FRESH_MS = 1000;

/**
 * grpc.health.v1: "" and every served service answer SERVING while the process is up
 * and ready; NOT_SERVING once shutdown has begun, so load balancers drain it first, and
 * while `probe` (if any) answers false: a service whose pool cannot hand out a connection
 * within its budget cannot serve. Checks arriving together share one probe, and its answer
 * stands for a second.
 */
export class HealthState {
  private serving = true;
  private probed?: { at: number; answer: Promise<boolean> };
  constructor(
    readonly serviceNames: string[],
    private readonly probe?: () => Promise<boolean>,
  ) {}
  setServing(serving: boolean): void {
    this.serving = serving;
  }
  async statusOf(service: string): Promise<Status | undefined> {
    if (service !== "" && !this.serviceNames.includes(service)) return undefined;
    if (!this.serving) return Status.NOT_SERVING;
    return (await this.probeAnswer()) ? Status.SERVING : Status.NOT_SERVING;
  }
  private probeAnswer(): Promise<boolean> {
    if (!this.probe) return Promise.resolve(true);
    const now = Date.now();
    if (!this.probed || now - this.probed.at > PROBE_FRESH_MS) {
      this.probed = { at: now, answer: this.probe().catch(() => false) };
    }
    return this.probed.answer;
  }
}

export function registerHealth(router: ConnectRouter, state: HealthState): void {
  router.service(Health, {
    async check(req) {
      const status = await state.statusOf(req.service);
      if (status === undefined) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return { status };
    },
    async list() {
      const statuses: Record<string, { status: Status }> = { "": { status: (await state.statusOf(""))! } };
      for (const name of state.serviceNames) statuses[name] = { status: (await state.statusOf(name))! };
      return { statuses };
    },
    async *watch(req, ctx) {
      const status = (await state.statusOf(req.service)) ?? Status.SERVICE_UNKNOWN;
      yield { status };
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    },
  });
}
