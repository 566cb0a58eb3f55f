import type { ServiceImpl } from "@connectrpc/connect";
import type { IntakeService } from "@transferops/kit/gen/transferops/intake/v1/intake_service_pb";
import type { Launcher } from "../flows/launch.ts";
import { actorOf, toTransaction } from "../flows/mappers.ts";

export function launchHandlers(launcher: Launcher): Pick<ServiceImpl<typeof IntakeService>, "launchTransaction"> {
  return {
    async launchTransaction(req) {
      return { transaction: toTransaction(await launcher.launch(actorOf(req.caller), req.transactionId)) };
    },
  };
}
