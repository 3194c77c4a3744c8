/** Whether `s` is a UUID as PostgreSQL's `uuid` type reads one (the hyphenated form): text that is not would fail a `::uuid` cast. */
export function isUuid(s: string): boolean {
  return UUID.test(s);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
