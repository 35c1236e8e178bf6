// The API explorer (/docs) and OpenAPI document (/openapi.json), with Swagger UI's assets served
// by Hearth itself from the bundle: the explorer works with no network at all.
import { Elysia } from "elysia";
import { openapi } from "@elysiajs/openapi";
import uiBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import uiCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { useElysiaFormats } from "./formats";

// Importing the plugin replaced the string format checks with slow ones (see formats.ts).
useElysiaFormats();

const ASSETS = "/docs/assets";

export function explorer(version: string) {
  const asset = (path: string, type: string) => () =>
    new Response(Bun.file(path), { headers: { "content-type": type, "cache-control": "public, max-age=86400" } });

  return new Elysia({ name: "hearth-explorer" })
    .get(`${ASSETS}/swagger-ui-bundle.js`, asset(uiBundle, "text/javascript; charset=utf-8"), { detail: { hide: true } })
    .get(`${ASSETS}/swagger-ui.css`, asset(uiCss, "text/css; charset=utf-8"), { detail: { hide: true } })
    .use(
      openapi({
        path: "/docs",
        specPath: "/openapi.json",
        provider: "swagger-ui",
        swagger: {
          cdn: `${ASSETS}/swagger-ui-bundle.js`,
          theme: `${ASSETS}/swagger-ui.css`,
          // Swagger UI would otherwise send the document to an online validator.
          validatorUrl: "none",
          persistAuthorization: true,
        } as never,
        exclude: { paths: [/^\/docs/, "/openapi.json"] },
        documentation: {
          info: {
            title: "Hearth API",
            version,
            description:
              "Self-hosted agent workspace platform. Sign in with POST /api/auth/login for a session JWT; create API tokens under /api/api-tokens.",
          },
          components: {
            securitySchemes: {
              session: { type: "http", scheme: "bearer", bearerFormat: "JWT", description: "User session from POST /api/auth/login" },
              apiToken: { type: "apiKey", in: "header", name: "X-API-Token", description: "Workspace API token (svc_...)" },
              apiTokenBearer: { type: "http", scheme: "bearer", bearerFormat: "svc_ API token", description: "Workspace API token as a bearer credential" },
            },
          },
          security: [{ apiToken: [] }, { apiTokenBearer: [] }, { session: [] }],
        },
      }),
    );
}
