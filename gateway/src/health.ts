import { serviceClient } from "@transferops/kit";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@transferops/kit/gen/grpc/health/v1/health_pb";
import type { ServiceUrls } from "./services.ts";

/** Asks each service's grpc.health.v1 Check; a service that does not answer in time is DOWN. */
export async function probeServices(urls: ServiceUrls, timeoutMs = 1_500): Promise<Record<string, string>> {
  const entries = await Promise.all(
    Object.entries(urls).map(async ([name, url]) => {
      try {
        const res = await serviceClient(Health, url).check({}, { timeoutMs });
        return [name, Status[res.status]] as const;
      } catch {
        return [name, "DOWN"] as const;
      }
    }),
  );
  return Object.fromEntries(entries);
}
