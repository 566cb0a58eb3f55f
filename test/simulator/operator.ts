// A simulated mobile-money operator: wallets per MSISDN (the agents' SIMs and the
// customers), PINs per SIM, and USSD menus for operator_a (the *126# style) and
// operator_b (the #148# agent line) shaped like the templates dispatch sends
// (services/dispatch/src/domain/ussd-menus.json). It moves money only when the final
// step is the right PIN, and shows the recipient's registered name on the
// confirmation screen before the PIN, as the real networks do.
//
// A session is driven step by step, as a handset does: `open(dial)` then `reply(text)`
// for each later step. The closing screen and a `receipt` (what the operator's SMS would
// say) come back when the session ends.

import { randomBytes } from "node:crypto";

export type OperatorName = "operator_a" | "operator_b";
export type OperationKind = "deposit" | "withdrawal" | "balance" | "float_deposit" | "mini_statement";

/** What the operator's confirmation SMS would report; the evidence side turns it into text. */
export interface Receipt {
  kind: OperationKind;
  operator: OperatorName;
  /** SIM (agent wallet) that ran the session. */
  sim_msisdn: string;
  /** FCFA moved (the balance read for a balance check). */
  amount: number;
  fee: number;
  balance_after: number;
  reference: string;
  counterparty_msisdn: string | null;
  counterparty_name: string | null;
  at: Date;
}

export interface Screen {
  text: string;
  /** The session is over (closing screen, refusal, or no dialog at all). */
  done: boolean;
  /** Money moved (or a balance was read): what the SMS will say. */
  receipt?: Receipt;
  /** The operator refused (wrong PIN, insufficient balance, unknown menu). */
  refused?: boolean;
}

interface Wallet {
  msisdn: string;
  operator: OperatorName;
  balance: number;
  name: string | null;
  /** Agent SIMs only. */
  pin: string | null;
  /** An agent SIM (a handset dials from it), not a customer. */
  isSim: boolean;
  /** Trust on first use: a SIM registered without PIN adopts the first PIN presented. */
  pinUnknown?: boolean;
}

type Input = "amount" | "msisdn" | "pin" | "merchant_code";

/** One path through a menu: literal replies that select it, then the values it asks for. */
interface MenuPath {
  kind: OperationKind;
  dial: string;
  /** Menu choices after the dial (operator_a's tree). */
  choices: string[];
  inputs: Input[];
}

const MENUS: Record<OperatorName, MenuPath[]> = {
  operator_a: [
    { kind: "deposit", dial: "*126#", choices: ["1", "1"], inputs: ["msisdn", "amount", "pin"] },
    { kind: "float_deposit", dial: "*126#", choices: ["1", "2"], inputs: ["msisdn", "amount", "pin"] },
    { kind: "withdrawal", dial: "*126#", choices: ["2"], inputs: ["msisdn", "amount", "pin"] },
    { kind: "balance", dial: "*126#", choices: ["5", "1"], inputs: ["pin"] },
    { kind: "mini_statement", dial: "*126#", choices: ["7", "1", "2"], inputs: ["pin"] },
  ],
  operator_b: [
    { kind: "deposit", dial: "#148*2#", choices: [], inputs: ["amount", "msisdn", "pin"] },
    { kind: "withdrawal", dial: "#148*3#", choices: [], inputs: ["amount", "msisdn", "merchant_code"] },
    { kind: "float_deposit", dial: "#148*4#", choices: [], inputs: ["msisdn", "amount", "merchant_code"] },
    { kind: "mini_statement", dial: "#148#", choices: ["3"], inputs: ["merchant_code"] },
  ],
};

const PROMPTS: Record<Input, string> = {
  amount: "Entrez le montant (FCFA) :",
  msisdn: "Entrez le numero du client :",
  pin: "Entrez votre code secret :",
  merchant_code: "Entrez votre code marchand :",
};

/** The fee the simulated operator charges on a deposit: 1 %, at least 50 FCFA. */
export function depositFee(amount: number): number {
  return Math.max(50, Math.round(amount / 100));
}

export class SimulatedOperator {
  private readonly wallets = new Map<string, Wallet>();
  /** Every receipt issued, in order. */
  readonly receipts: Receipt[] = [];

  /** An agent SIM: its wallet, its PIN (omitted: the first PIN presented is adopted). */
  registerSim(msisdn: string, operator: OperatorName, o: { pin?: string; balance?: number } = {}): void {
    const existing = this.wallets.get(msisdn);
    this.wallets.set(msisdn, {
      msisdn,
      operator,
      balance: o.balance ?? existing?.balance ?? 0,
      name: null,
      pin: o.pin ?? existing?.pin ?? null,
      isSim: true,
      pinUnknown: o.pin === undefined && existing?.pin == null,
    });
  }

  /** A customer wallet with the name the network shows on confirmation screens. */
  registerCustomer(msisdn: string, name: string, balance = 0): void {
    const operator: OperatorName = /^6(5[0-4]|7\d|80|8[23])/.test(msisdn) ? "operator_a" : "operator_b";
    this.wallets.set(msisdn, { msisdn, operator, balance, name, pin: null, isSim: false });
  }

  balanceOf(msisdn: string): number {
    return this.wallets.get(msisdn)?.balance ?? 0;
  }

  setBalance(msisdn: string, balance: number): void {
    const w = this.wallets.get(msisdn);
    if (w) w.balance = balance;
  }

  hasSim(msisdn: string): boolean {
    return this.wallets.get(msisdn)?.isSim === true;
  }

  /** Opens a USSD session on the SIM with its first step (the dial string). */
  open(simMsisdn: string, dial: string): UssdSession {
    return new UssdSession(this, simMsisdn, dial);
  }

  /** @internal */
  wallet(msisdn: string): Wallet | undefined {
    return this.wallets.get(msisdn);
  }

  /** @internal */
  menusOf(operator: OperatorName): MenuPath[] {
    return MENUS[operator];
  }

  /** @internal Checks the PIN of a SIM, adopting it on first use when none was registered. */
  pinMatches(sim: Wallet, pin: string): boolean {
    if (sim.pinUnknown) {
      sim.pin = pin;
      sim.pinUnknown = false;
    }
    return sim.pin === pin;
  }

  /** @internal */
  settle(sim: Wallet, path: MenuPath, values: Partial<Record<Input, string>>): Screen {
    const at = new Date();
    const reference = `${path.kind === "balance" ? "BL" : "CI"}${at.toISOString().slice(2, 10).replace(/-/g, "")}.${randomBytes(3).toString("hex").toUpperCase()}`;
    const amount = Number(values.amount ?? 0);
    const counterparty = values.msisdn ?? null;
    const customer = counterparty ? this.wallets.get(counterparty) : undefined;
    const receipt = (moved: number, fee: number, counterpartyName: string | null): Receipt => {
      const r: Receipt = {
        kind: path.kind,
        operator: sim.operator,
        sim_msisdn: sim.msisdn,
        amount: moved,
        fee,
        balance_after: sim.balance,
        reference,
        counterparty_msisdn: counterparty,
        counterparty_name: counterpartyName,
        at,
      };
      this.receipts.push(r);
      return r;
    };
    switch (path.kind) {
      case "balance":
        return {
          text: `Le solde de votre compte est de ${sim.balance} FCFA.`,
          done: true,
          receipt: receipt(sim.balance, 0, null),
        };
      case "mini_statement":
        return {
          text: "Vos dernieres transactions vous seront envoyees par SMS.",
          done: true,
          receipt: receipt(0, 0, null),
        };
      case "deposit":
      case "float_deposit": {
        const fee = path.kind === "deposit" ? depositFee(amount) : 0;
        if (sim.balance < amount + fee) {
          return { text: "Echec: solde insuffisant pour effectuer cette transaction.", done: true, refused: true };
        }
        sim.balance -= amount + fee;
        if (customer) customer.balance += amount;
        else this.registerCustomer(counterparty!, "", amount);
        return {
          text: `Depot de ${amount} FCFA vers ${counterparty} reussi. Ref ${reference}. Nouveau solde: ${sim.balance} FCFA.`,
          done: true,
          receipt: receipt(amount, fee, customer?.name || null),
        };
      }
      case "withdrawal": {
        if (customer && customer.balance < amount) {
          return { text: "Echec: le client n'a pas assez de fonds.", done: true, refused: true };
        }
        if (customer) customer.balance -= amount;
        sim.balance += amount;
        return {
          text: `Retrait de ${amount} FCFA du ${counterparty} reussi. Ref ${reference}.`,
          done: true,
          receipt: receipt(amount, 0, customer?.name || null),
        };
      }
    }
  }
}

/**
 * One USSD dialog. Screens are the operator's texts; the confirmation screen of a
 * deposit shows `Depot de <amount> FCFA a <NAME> (<msisdn>)` before asking for the PIN,
 * or only the number when the recipient has no registered name.
 */
export class UssdSession {
  private path: MenuPath | undefined;
  private candidates: MenuPath[];
  private choicesGiven: string[] = [];
  private readonly values: Partial<Record<Input, string>> = {};
  private sim: Wallet | undefined;
  screen: Screen;

  constructor(
    private readonly operator: SimulatedOperator,
    simMsisdn: string,
    dial: string,
  ) {
    this.sim = operator.wallet(simMsisdn);
    if (!this.sim || !this.sim.isSim) {
      this.candidates = [];
      this.screen = { text: "Service indisponible.", done: true, refused: true };
      return;
    }
    // operator_b's balance check is a single dial string carrying the PIN: #148*5*<pin>#.
    const single = /^#148\*5\*(\d{4,8})#$/.exec(dial);
    if (this.sim.operator === "operator_b" && single) {
      this.candidates = [];
      this.screen = this.operator.pinMatches(this.sim, single[1])
        ? this.operator.settle(this.sim, { kind: "balance", dial, choices: [], inputs: ["pin"] }, {})
        : { text: "Code secret incorrect.", done: true, refused: true };
      return;
    }
    this.candidates = operator.menusOf(this.sim.operator).filter((p) => p.dial === dial);
    if (this.candidates.length === 0) {
      this.screen = { text: "Code USSD inconnu.", done: true, refused: true };
      return;
    }
    this.screen = this.next();
  }

  /** The recipient name shown on the current screen, as a handset would read it; null when none. */
  displayedName(): string | null {
    const m = /a (.+) \(\d{9}\)\./.exec(this.screen.text);
    return m ? m[1] : null;
  }

  reply(text: string): Screen {
    if (this.screen.done) return this.screen;
    if (!this.path) {
      this.choicesGiven.push(text);
      this.candidates = this.candidates.filter(
        (p) => p.choices.slice(0, this.choicesGiven.length).join("*") === this.choicesGiven.join("*"),
      );
      if (this.candidates.length === 0) return (this.screen = { text: "Choix invalide.", done: true, refused: true });
      this.screen = this.next();
      return this.screen;
    }
    const input = this.path.inputs[Object.keys(this.values).length];
    if (input === "pin") {
      if (!this.operator.pinMatches(this.sim!, text))
        return (this.screen = { text: "Code secret incorrect.", done: true, refused: true });
    } else if (input === "amount" && !/^[1-9]\d*$/.test(text)) {
      return (this.screen = { text: "Montant invalide.", done: true, refused: true });
    } else if (input === "msisdn" && !/^\d{9}$/.test(text)) {
      return (this.screen = { text: "Numero invalide.", done: true, refused: true });
    }
    this.values[input] = text;
    this.screen = this.next();
    return this.screen;
  }

  /** Ends the dialog without answering (the handset closes it, e.g. on a name mismatch). */
  close(): void {
    this.screen = { text: "Session fermee.", done: true };
  }

  private next(): Screen {
    if (!this.path) {
      const exact = this.candidates.find((p) => p.choices.length === this.choicesGiven.length);
      if (!exact) return { text: "1. Transfert\n2. Retrait\n5. Mon compte\n7. Services", done: false };
      this.path = exact;
    }
    const asked = Object.keys(this.values).length;
    if (asked >= this.path.inputs.length) return this.operator.settle(this.sim!, this.path, this.values);
    const input = this.path.inputs[asked];
    if (input === "pin" && (this.path.kind === "deposit" || this.path.kind === "float_deposit")) {
      const msisdn = this.values.msisdn!;
      const name = this.operator.wallet(msisdn)?.name;
      const who = name ? `a ${name} (${msisdn})` : `au ${msisdn}`;
      return { text: `Depot de ${this.values.amount} FCFA ${who}. ${PROMPTS.pin}`, done: false };
    }
    return { text: PROMPTS[input], done: false };
  }
}
