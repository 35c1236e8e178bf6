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

/** `limit` alone means "the first `limit` items"; otherwise page/pageSize (defaults 1 and 50). */
export function pageWindow(q: { page?: number; pageSize?: number; limit?: number }): PageWindow {
  const pageSize = q.pageSize ?? (q.page === undefined && q.limit !== undefined ? q.limit : 50);
  const page = q.page ?? 1;
  return { page, pageSize, offset: (page - 1) * pageSize };
}
