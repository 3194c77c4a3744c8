/**
 * The one rule by which two written emails are the same person: trimmed, Unicode NFKC, case-folded
 * (upper then lower case, so `ß` and `SS` meet; NFKC again after it). Sign-in's candidates, the
 * sign-in throttle's key and a team's "already exists" check all compare this key, so no spelling
 * of an address can reach an account while being counted under another key (`İ`, which
 * PostgreSQL's lower() maps to `i`, keeps its dot here and so matches no `i` address).
 * Stored beside the address as `users.email_key`.
 */
export function emailKey(email: string): string {
  return email.trim().normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}
