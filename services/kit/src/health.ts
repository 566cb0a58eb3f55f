import type { ConnectRouter } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "./gen/grpc/health/v1/health_pb.ts";

/**
 * grpc.health.v1: "" and every served service answer SERVING while the process is up
 * and ready; NOT_SERVING once shutdown has begun, so load balancers drain it first.
 */
export class HealthState {
  private serving = true;
  constructor(readonly serviceNames: string[]) {}
  setServing(serving: boolean): void {
    this.serving = serving;
  }
  statusOf(service: string): Status | undefined {
    if (service !== "" && !this.serviceNames.includes(service)) return undefined;
    return this.serving ? Status.SERVING : Status.NOT_SERVING;
  }
}

export function registerHealth(router: ConnectRouter, state: HealthState): void {
  router.service(Health, {
    check(req) {
      const status = state.statusOf(req.service);
      if (status === undefined) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return { status };
    },
    list() {
      const statuses: Record<string, { status: Status }> = { "": { status: state.statusOf("")! } };
      for (const name of state.serviceNames) statuses[name] = { status: state.statusOf(name)! };
      return { statuses };
    },
    async *watch(req, ctx) {
      const status = state.statusOf(req.service) ?? Status.SERVICE_UNKNOWN;
      yield { status };
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve()));
    },
  });
}
