import { Migration } from "@transferops/kit";

/**
 * A commission credited to the wallet inside another receipt (Orange's agent cash-in: "Commission
 * : 32 FCFA, Montant Net Debite : 15968FCFA"): the balance chain moves the wallet by the amount
 * and fee less it. Null for the messages stored before (they were read without it).
 */
export class Migration0003Commission extends Migration {
  override name = "Migration0003Commission";

  up(): void {
    this.addSql(
      `alter table evidence.messages add column commission bigint null check (commission is null or commission >= 0)`,
    );
  }
}
