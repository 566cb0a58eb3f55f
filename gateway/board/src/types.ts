import type { components, paths } from "../../src/openapi.d.ts";

// The resources the pages show, as the served OpenAPI document types them.
type Json<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: { [K in S]: { content: { "application/json": infer T } } };
}
  ? T
  : never;

export type Operation = components["schemas"]["Operation"];
export type Evidence = components["schemas"]["Evidence"];
export type Unproven = components["schemas"]["UnprovenOperation"];
export type SettledOnWord = components["schemas"]["SettledOnWordRow"];
export type TransactionRow = Json<"/v1/transactions", "get">[number];
export type Transaction = Json<"/v1/transactions/{transaction_id}", "get">;
export type Movement = Json<"/v1/evidences/movements", "get">[number];
export type OwnSim = components["schemas"]["OwnSim"];
export type Device = components["schemas"]["Device"];
export type DeviceHealth = components["schemas"]["DeviceHealth"];
export type Sim = components["schemas"]["Sim"];
export type Notification = components["schemas"]["Notification"];
export type Agent = components["schemas"]["Agent"];
export type FleetLimit = components["schemas"]["FleetLimit"];
export type Reconciliation = Json<"/v1/reconciliations/daily", "get">;
export type SimDay = Reconciliation["sims"][number];
export type UnprovenHandset = Json<"/v1/analytics/unproven-by-handset", "get">["handsets"][number];
export type Analytics = Json<"/v1/analytics", "get">;
export type Webhook = components["schemas"]["Webhook"];
export type AuditEntry = components["schemas"]["AuditEntry"];
export type WebhookDelivery = components["schemas"]["WebhookDelivery"];
export type SimHistory = components["schemas"]["GetSimHistoryResponse"];
export type WordingRule = components["schemas"]["WordingRule"];
export type WordingTrial = components["schemas"]["WordingTrial"];
export type UnknownWordingGroup = components["schemas"]["UnknownWordingGroup"];
export type WordingProposal = components["schemas"]["WordingProposal"];
export type ChainLink = Json<"/v1/reconciliations/daily/{sim_id}/chain", "get">["links"][number];
