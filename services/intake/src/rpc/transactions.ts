import type { ServiceImpl } from "@connectrpc/connect";
import type { IntakeService } from "@transferops/kit/gen/transferops/intake/v1/intake_service_pb";
import * as actions from "../flows/transaction-actions.ts";
import type { IntakeDeps } from "../flows/ports.ts";

type Impl = Omit<ServiceImpl<typeof IntakeService>, "launchTransaction">;

export function transactionHandlers(deps: IntakeDeps): Impl {
  return {
    createTransaction: (req) => actions.createTransaction(deps, req),
    listTransactions: (req) => actions.listTransactions(deps, req),
    getTransaction: (req) => actions.getTransaction(deps, req),
    correctTransactionReceiver: (req) => actions.correctTransactionReceiver(deps, req),
    confirmTransactionPayment: (req) => actions.confirmTransactionPayment(deps, req),
    undoTransactionPayment: (req) => actions.undoTransactionPayment(deps, req),
    cancelTransaction: (req) => actions.cancelTransaction(deps, req),
    closeTransactionByReceipt: (req) => actions.closeTransactionByReceipt(deps, req),
  };
}
