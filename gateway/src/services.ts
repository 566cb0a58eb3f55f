import type { Client } from "@connectrpc/connect";
import { serviceClient } from "@transferops/kit";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";

export interface ServiceUrls {
  fleet: string;
  dispatch: string;
  evidence: string;
  intake: string;
  analytics: string;
  messaging: string;
}

/** Connect clients (gRPC transport) of the services behind the gateway. */
export interface Services {
  urls: ServiceUrls;
  fleet: Client<typeof FleetService>;
  analytics: Client<typeof AnalyticsService>;
}

export function connectServices(urls: ServiceUrls): Services {
  return {
    urls,
    fleet: serviceClient(FleetService, urls.fleet),
    analytics: serviceClient(AnalyticsService, urls.analytics),
  };
}
