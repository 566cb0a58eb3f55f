import { Code, ConnectError } from "@connectrpc/connect";
import type { GetSimActivityResponse } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { FleetDeps } from "./deps.ts";

// Calls fleet makes to dispatch for operations data it does not hold.

export const isUnimplemented = (err: unknown) => err instanceof ConnectError && err.code === Code.Unimplemented;

/**
 * A SIM's operations as dispatch reports them. Any failure is thrown (the route answers
 * 500): fleet never guesses that a SIM is idle.
 */
export async function simActivity(deps: Pick<FleetDeps, "dispatch">, simId: string): Promise<GetSimActivityResponse> {
  return deps.dispatch.getSimActivity({ simId });
}
