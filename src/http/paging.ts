import { Type, type TSchema } from 'typebox';
import { badRequest } from '../errors.js';

/** docs/API.md, Pages: Spring-style pages. */
export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({
    content: Type.Array(item),
    totalElements: Type.Integer(),
    totalPages: Type.Integer(),
    number: Type.Integer(),
    size: Type.Integer(),
    numberOfElements: Type.Integer(),
    first: Type.Boolean(),
    last: Type.Boolean(),
    empty: Type.Boolean(),
  });

export interface PageRequest<F extends string> {
  page: number;
  size: number;
  sort: Array<{ field: F; dir: 'asc' | 'desc' }>;
}

/** Parse `sort=field,dir` values against a whitelist of sortable fields; anything else is a 400. */
export function pageRequest<F extends string>(q: { page: number; size: number; sort?: string[] | undefined }, sortable: readonly F[]): PageRequest<F> {
  const sort = (q.sort ?? []).map((s, i) => {
    const [field = '', dir = 'asc'] = s.split(',');
    if (!(sortable as readonly string[]).includes(field)) {
      throw badRequest('validation_failed', `Cannot sort by ${field}; sortable: ${sortable.join(', ')}`, [
        { path: `querystring/sort/${i}`, message: `must be one of ${sortable.join(', ')}` },
      ]);
    }
    return { field: field as F, dir: dir.toLowerCase() as 'asc' | 'desc' };
  });
  return { page: q.page, size: q.size, sort };
}

export function toPage<T>(content: T[], total: number, req: { page: number; size: number }) {
  const totalPages = Math.ceil(total / req.size);
  return {
    content,
    totalElements: total,
    totalPages,
    number: req.page,
    size: req.size,
    numberOfElements: content.length,
    first: req.page === 0,
    last: req.page >= totalPages - 1,
    empty: content.length === 0,
  };
}
