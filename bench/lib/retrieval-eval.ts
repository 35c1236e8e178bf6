// Scores for the retrieval suite: file-level hit@1/@5, MRR@10, nDCG@10 and the cited PDF page of one ranked list of hits.
import type { RetrievalQuestion } from "../fixtures/retrieval-questions";

/** One search result as the suite sees it: which file, which page, best first. */
export interface EvalHit {
  file: string;
  page: number | null;
}

export interface QuestionScores {
  hit1: number;
  hit5: number;
  mrr10: number;
  ndcg10: number;
  /** 1 when the first hit from the labelled PDF cites a labelled page; null for questions without a page. */
  page: number | null;
}

export const METRIC_KEYS = ["hit1", "hit5", "mrr10", "ndcg10", "page"] as const;
export type MetricKey = (typeof METRIC_KEYS)[number];
export const METRIC_LABELS: Record<MetricKey, string> = { hit1: "hit@1", hit5: "hit@5", mrr10: "MRR@10", ndcg10: "nDCG@10", page: "page" };

/** Files in the order of their first hit (a file's later chunks do not count again). */
export const fileRanking = (hits: readonly EvalHit[]): string[] => [...new Set(hits.map((h) => h.file))];

export function scoreHits(hits: readonly EvalHit[], q: RetrievalQuestion): QuestionScores {
  const ranking = fileRanking(hits).slice(0, 10);
  const rel = new Set(q.files);
  const first = ranking.findIndex((f) => rel.has(f));
  let dcg = 0;
  ranking.forEach((f, i) => {
    if (rel.has(f)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(rel.size, 10); i++) ideal += 1 / Math.log2(i + 2);
  let page: number | null = null;
  if (q.pages) {
    // The page a reader is sent to: the one cited by the best-ranked passage of the labelled PDF.
    const cited = hits.find((h) => h.file === q.files[0]);
    page = cited && cited.page !== null && q.pages.includes(cited.page) ? 1 : 0;
  }
  return { hit1: first === 0 ? 1 : 0, hit5: first >= 0 && first < 5 ? 1 : 0, mrr10: first < 0 ? 0 : 1 / (first + 1), ndcg10: dcg / ideal, page };
}

/** Mean of a metric over the questions that have it (page accuracy only counts page questions). */
export function meanOf(scores: readonly QuestionScores[], key: MetricKey): number {
  const xs = scores.map((s) => s[key]).filter((x): x is number => x !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
}
