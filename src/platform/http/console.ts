// Serves the web console: index.html at / and at every console path (single-page app), hashed
// assets under /assets/ cached for a year. API paths never fall through to the page: an unknown
// /api/* path keeps its JSON 404.
import { Elysia } from "elysia";
import { noSuchEndpoint } from "../errors";
import type { ConsoleAssets } from "./console-assets";

/** Paths that belong to the API or the explorer, never to the console. */
const NOT_CONSOLE = /^\/(api|mcp|docs|openapi\.json|health|assets)(\/|$)/;

// The page runs only its own bundled script and style; the API is same-origin. No inline script,
// no eval, nothing from another origin, and no framing (clickjacking).
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "media-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": CONSOLE_CSP,
  "cache-control": "no-cache",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

export function consoleRoutes(assets: () => Promise<ConsoleAssets>) {
  const page = async () => new Response((await assets()).index, { headers: PAGE_HEADERS });
  const hide = { detail: { hide: true } };

  return new Elysia({ name: "hearth-console" })
    .get("/", page, hide)
    .get(
      "/assets/:name",
      async ({ params }) => {
        const file = (await assets()).files.get(params.name);
        if (!file) throw noSuchEndpoint();
        // Names carry a content hash: a new build has new names, so the old ones may be kept forever.
        return new Response(file, {
          headers: { "content-type": file.type, "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" },
        });
      },
      hide,
    )
    .get(
      "/*",
      ({ request }) => {
        const path = new URL(request.url).pathname;
        if (NOT_CONSOLE.test(path)) throw noSuchEndpoint();
        return page();
      },
      hide,
    );
}
