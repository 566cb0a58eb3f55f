import type { Client } from "@connectrpc/connect";
import { serviceClient } from "@transferops/kit";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { IntakeService } from "@transferops/kit/gen/transferops/intake/v1/intake_service_pb";
import { MessagingService } from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";

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
  dispatch: Client<typeof DispatchService>;
  evidence: Client<typeof EvidenceService>;
  intake: Client<typeof IntakeService>;
  analytics: Client<typeof AnalyticsService>;
  messaging: Client<typeof MessagingService>;
}

export function connectServices(urls: ServiceUrls): Services {
  return {
    urls,
    fleet: serviceClient(FleetService, urls.fleet),
    dispatch: serviceClient(DispatchService, urls.dispatch),
    evidence: serviceClient(EvidenceService, urls.evidence),
    intake: serviceClient(IntakeService, urls.intake),
    analytics: serviceClient(AnalyticsService, urls.analytics),
    messaging: serviceClient(MessagingService, urls.messaging),
  };
}
