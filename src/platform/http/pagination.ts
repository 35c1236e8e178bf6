// The spec's pagination (page, pageSize, limit) as one schema and one window computation.
import { t } from "elysia";
import { Int, QueryInt } from "./schemas";

export const PaginationQuery = t.Object({
  page: t.Optional(QueryInt("page", { minimum: 1, maximum: 1_000_000, description: "Page number, from 1" })),
  pageSize: t.Optional(QueryInt("pageSize", { minimum: 1, maximum: 200, description: "Items per page (default 50)" })),
  limit: t.Optional(QueryInt("limit", { minimum: 1, maximum: 1000, description: "Alternative cap on results (default 100)" })),
});

export interface PageWindow {
  page: number;
  pageSize: number;
  offset: number;
}

export interface Pagination {
  page: number;
  pageSize: number;
  total: number;
}

export const PaginationSchema = t.Object({ page: Int(), pageSize: Int(), total: Int() });

/**
 * page/pageSize (defaults 1 and 50); `limit` caps the items of a page: alone it is "the first
 * `limit` items", with `page` the page size (page 2 of limit 10 is items 11 to 20), with `pageSize`
 * the smaller of the two.
 */
export function pageWindow(q: { page?: number; pageSize?: number; limit?: number }): PageWindow {
  const pageSize = Math.min(q.pageSize ?? Infinity, q.limit ?? Infinity);
  const size = Number.isFinite(pageSize) ? pageSize : 50;
  const page = q.page ?? 1;
  return { page, pageSize: size, offset: (page - 1) * size };
}

/** Whether the query asks for a page at all (short lists answer whole when it does not). */
export const asksPage = (q: { page?: number; pageSize?: number; limit?: number }) => q.page !== undefined || q.pageSize !== undefined || q.limit !== undefined;

/** A page of a list held in memory, with the spec's pagination object; the whole list when no page was asked. */
export function pageOf<T>(items: T[], q: { page?: number; pageSize?: number; limit?: number }): { data: T[]; pagination: Pagination } {
  if (!asksPage(q)) return { data: items, pagination: { page: 1, pageSize: items.length, total: items.length } };
  const w = pageWindow(q);
  return { data: items.slice(w.offset, w.offset + w.pageSize), pagination: { page: w.page, pageSize: w.pageSize, total: items.length } };
}
