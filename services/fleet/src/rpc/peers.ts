import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import type { Logger } from "@transferops/kit";
import { GetSimActivityResponseSchema, type GetSimActivityResponse } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { FleetDeps } from "./deps.ts";

// Calls fleet makes to dispatch for operations data it does not hold.

export const isUnimplemented = (err: unknown) => err instanceof ConnectError && err.code === Code.Unimplemented;

/**
 * A SIM's operations as dispatch reports them. A dispatch that does not implement the
 * call yet holds no operations: the activity is empty (logged). Any other failure is
 * thrown: fleet never guesses that a SIM is idle.
 */
export async function simActivity(deps: Pick<FleetDeps, "dispatch" | "log">, simId: string): Promise<GetSimActivityResponse> {
  try {
    return await deps.dispatch.getSimActivity({ simId });
  } catch (err) {
    if (!isUnimplemented(err)) throw err;
    warnOnce(deps.log, "dispatch does not implement GetSimActivity: treating the SIM as having no operations");
    return create(GetSimActivityResponseSchema, {});
  }
}

const warned = new Set<string>();
function warnOnce(log: Logger, message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  log.warn(message);
}
