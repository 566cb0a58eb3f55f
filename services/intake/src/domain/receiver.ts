// A rewrite of a transaction's receiver at the board, and what it does to the name check.
//
// The partner (intake's caller) may say it verified the receiver (`partner_verify`): the
// launch then tells the handset `partner_verified: true`, and the PIN goes without the
// handset comparing the name the operator shows. That holds for the receiver the partner
// sent, not for one an agent wrote since: after a rewrite of the name or the number, the
// operation carries `partner_verified: false` unless the receiver is the partner's again.
// A new contact_id alone changes nothing the operator shows. Every rewrite is recorded (who,
// when, before, after) in the transaction's history and in the audit log.

export interface ReceiverFields {
  receiver_name: string;
  receiver_phone: string;
  contact_id: string;
}

/** Whether `after` is the receiver the partner verified: its name (spaces at the ends aside) and number. */
export function isPartnersReceiver(partners: ReceiverFields, after: ReceiverFields): boolean {
  return (
    partners.receiver_name.trim() === after.receiver_name.trim() && partners.receiver_phone === after.receiver_phone
  );
}

/** The operation's `partner_verified`: the partner verified it, and it is still the partner's receiver. */
export function launchPartnerVerified(t: { partner_verify: boolean; receiver_verified: boolean }): boolean {
  return t.partner_verify && t.receiver_verified;
}
