// How Chinese, Japanese and Korean text is put in the keyword index and looked up there. FTS5's
// unicode61 tokenizer splits words at spaces and punctuation, so a run of CJK characters, written
// without spaces, was one token: "数据库" did not find "这是一个数据库系统". Such a run is indexed
// as its overlapping pairs of characters (数据 据库 库系 ...), which a search finds at any place.
// Measured on zh/ja/ko gettext catalogues (5,400 chunks): an FTS5 trigram index cannot match a
// two-character word, most Chinese words (2 of 94 found); Intl.Segmenter's words at index time cost
// ~1 ms a chunk (20 times the pairs) and keep Korean words glued to their particles (텍스트를: 5 of
// 107 stems found, 45 with pairs); pairs found every word. So the segmenter only picks a query's words.

/** Characters of the scripts written without spaces between words (and Korean, written with particles glued on). */
const CJK = "\\p{sc=Han}\\p{sc=Hiragana}\\p{sc=Katakana}\\p{sc=Hangul}\\u30fc\\uff70\\uff9e\\uff9f\\u3099\\u309a";
const CJK_RUNS = new RegExp(`[${CJK}]+`, "gu");
/** Splits a word into its CJK runs (odd indexes) and what is between them (even indexes). */
const CJK_SPLIT = new RegExp(`([${CJK}]+)`, "u");
const HANGUL = /\p{sc=Hangul}/u;
const HIRAGANA_ONLY = /^\p{sc=Hiragana}+$/u;
/** A run longer than this in a query is a pasted passage: its words are looked up, not the whole run. */
const MAX_RUN_PHRASE = 32;

/** Half-width katakana and compatibility forms folded into the forms written everywhere else. */
const chars = (run: string) => [...run.normalize("NFKC")];

/** The tokens a run is indexed as: each pair of neighbours, then the last character (for one-character searches). */
function runTokens(run: string): string[] {
  const c = chars(run);
  const tokens: string[] = [];
  for (let i = 0; i + 1 < c.length; i++) tokens.push(c[i]! + c[i + 1]!);
  tokens.push(c.at(-1)!);
  return tokens;
}

/** The text as the keyword index is given it: CJK runs as their pairs, everything else as it is. */
export function indexForm(text: string): string {
  return text.replace(CJK_RUNS, (run) => ` ${runTokens(run).join(" ")} `);
}

/** The text's words and the CJK runs inside them, in order: ["ERR-4711", "の原因"] for "ERR-4711の原因". */
export function splitRuns(word: string): { text: string; cjk: boolean }[] {
  return word
    .split(CJK_SPLIT)
    .map((text, i) => ({ text, cjk: i % 2 === 1 }))
    .filter((p) => p.text);
}

let segmenter: Intl.Segmenter | undefined;
/** Dictionary words of a Chinese or Japanese run (ICU's; the locale does not change them). */
const words = (run: string) => [...(segmenter ??= new Intl.Segmenter("ja", { granularity: "word" })).segment(run)].filter((s) => s.isWordLike).map((s) => s.segment);

const quoted = (tokens: string[]) => `"${tokens.join(" ")}"`;
/** The pairs of `text` as one FTS5 phrase: they must follow each other, so the text is found as written. */
const pairPhrase = (text: string) => quoted(runTokens(text).slice(0, -1));

/** An FTS5 expression of a query; not topical: looked up only when the query has nothing else. */
export interface QueryTerm {
  expr: string;
  topical: boolean;
}

/**
 * The FTS5 expressions a query's CJK run is looked up with (ORed with the query's other terms).
 * - One character: a prefix, which finds it as the first of a pair or the last of a run; a lone
 *   hiragana (a particle, in nearly every Japanese chunk) only when the query has nothing else.
 * - Korean: its pairs, each on its own (ORed), so that 데이터베이스를 finds 데이터베이스가.
 * - Chinese and Japanese: each dictionary word (not the one-character ones, nor the hiragana-only
 *   ones: particles and endings) as a phrase of its pairs, and the whole run as one more phrase,
 *   which ranks the chunks that have it as written first. On a mixed zh/ja/ko corpus (gettext
 *   catalogues, 5,400 chunks) this found the chunk that a query was taken from in the top 10 as
 *   often as the best of the other ways tried for each kind of query (a word, three words, a
 *   six-character extract, a Korean stem), where the pairs alone lost 15 of 92 Japanese queries.
 */
export function runQuery(run: string): QueryTerm[] {
  const c = chars(run);
  const whole = c.join("");
  if (c.length === 1) return [{ expr: `"${whole}"*`, topical: !HIRAGANA_ONLY.test(whole) }];
  // One term of the query, as a Korean word is one word (for fusion's lookup-or-sentence count).
  if (HANGUL.test(whole)) return [{ expr: runTokens(whole).slice(0, -1).map((t) => quoted([t])).join(" OR "), topical: true }];
  const kept = words(whole).filter((w) => [...w].length > 1 && !HIRAGANA_ONLY.test(w));
  const phrases = kept.map(pairPhrase);
  const runIsOneWord = kept.length === 1 && kept[0] === whole;
  if (phrases.length === 0 || (c.length <= MAX_RUN_PHRASE && !runIsOneWord)) phrases.push(pairPhrase(whole));
  return phrases.map((expr) => ({ expr, topical: true }));
}
