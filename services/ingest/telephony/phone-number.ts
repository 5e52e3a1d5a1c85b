export type NormalizedPhoneNumber =
  { readonly ok: true; readonly phone_number: string } | { readonly ok: false; readonly reason: string };

// Separators people type or copy from a dial pad; none of them is part of the number.
const SEPARATORS = /[\s\-.()]/g;
// E.164 allows at most 15 digits; fewer than 8 is no dialable international number.
const E164 = /^\+\d{8,15}$/;

/**
 * E.164 form of a number as typed: "+1 (555) 123-0001" and "15551230001" are both "+15551230001".
 * One form matters because the number is the key that stops two agents holding the same line.
 */
export function normalizePhoneNumber(raw: string): NormalizedPhoneNumber {
  const compact = raw.trim().replace(SEPARATORS, '');
  const phone_number = compact.startsWith('+') ? compact : `+${compact}`;
  if (!E164.test(phone_number)) {
    return { ok: false, reason: 'Phone number must be in E.164 form: a leading + and 8 to 15 digits' };
  }
  return { ok: true, phone_number };
}
