import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ProjectionStatusSchema } from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import { lastEventAt } from "../store/inbox.ts";
import { toProjectionStatus } from "./mappers.ts";
import type { AnalyticsDeps } from "./ports.ts";

/** How far the read model is behind the topics, and when it last heard an event. */
export async function projectionStatus({
  db,
  lag,
}: Pick<AnalyticsDeps, "db" | "lag">): Promise<MessageInitShape<typeof ProjectionStatusSchema>> {
  const last = await lastEventAt(db.em());
  return toProjectionStatus(last, await lag());
}
