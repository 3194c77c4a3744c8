/**
 * Column types and helpers every area of the schema uses.
 */
import { customType, timestamp } from 'drizzle-orm/pg-core';

export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (v) => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)),
  toDriver: (v) => v,
});

export const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

export const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
export const created = () => ts('created').notNull().defaultNow();
