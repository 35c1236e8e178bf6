// GitHub (and GitHub Enterprise Server) and Gitea / Forgejo: issues of one repository through
// their REST APIs (GitHub v3; Gitea v1 keeps GitHub's shapes), pages followed by the Link header.
import { t } from "elysia";
import { apiCall, baseUrl, MAX_PAGES, nextLink, type Connector, type ConnectorTool } from "./connector";

const MAX_ISSUES = 200;

function forge(kind: "github" | "gitea"): Connector {
  const product = kind === "github" ? "GitHub" : "Gitea";
  const api = (config: Record<string, unknown>) => (kind === "github" ? baseUrl(config, "https://api.github.com") : `${baseUrl(config, "http://gitea.local")}/api/v1`);
  const headers = (credentials: Record<string, unknown>): Record<string, string> =>
    kind === "github" ? { authorization: `Bearer ${credentials.token}`, "x-github-api-version": "2022-11-28" } : { authorization: `token ${credentials.token}` };
  const repo = (config: Record<string, unknown>) => `${encodeURIComponent(String(config.owner))}/${encodeURIComponent(String(config.repo))}`;
  const issueView = (i: any) => ({ number: i.number, title: i.title, state: i.state, url: i.html_url, author: i.user?.login, labels: (i.labels ?? []).map((l: any) => l.name), created_at: i.created_at });

  const tools: ConnectorTool[] = [
    {
      name: "list_issues",
      description: `List issues of the ${product} repository (open by default), newest first.`,
      input: t.Object({ state: t.Optional(t.UnionEnum(["open", "closed", "all"], { default: "open" })), limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_ISSUES, default: 30 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const limit = args.limit ?? 30;
        const issues: any[] = [];
        let url: string | undefined = `${api(ctx.config)}/repos/${repo(ctx.config)}/issues?state=${args.state ?? "open"}&${kind === "github" ? "per_page" : "limit"}=${Math.min(limit, 100)}`;
        for (let pages = 0; url && issues.length < limit && pages < MAX_PAGES; pages++) {
          const { data, headers: h } = await apiCall(product, url, { headers: headers(ctx.credentials), signal: ctx.signal, allow: ctx.allow });
          // GitHub lists pull requests among issues; they are not issues here.
          issues.push(...(data as any[]).filter((i) => !i.pull_request));
          // An empty page ends the list whatever its Link header says.
          const next = (data as any[]).length > 0 ? nextLink(h.get("link")) : undefined;
          // A next page on another host is not followed: the token must only ever go to the configured server.
          url = next && new URL(next, url).origin === new URL(api(ctx.config)).origin ? new URL(next, url).toString() : undefined;
        }
        const list = issues.slice(0, limit).map(issueView);
        return { text: list.length ? list.map((i) => `#${i.number} [${i.state}] ${i.title} (${i.url})`).join("\n") : "No issues.", data: { issues: list } };
      },
    },
    {
      name: "create_issue",
      description: `Open an issue in the ${product} repository.`,
      input: t.Object({ title: t.String({ minLength: 1, maxLength: 256 }), body: t.Optional(t.String({ maxLength: 65_000 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const { data } = await apiCall(product, `${api(ctx.config)}/repos/${repo(ctx.config)}/issues`, { method: "POST", headers: headers(ctx.credentials), body: { title: args.title, body: args.body ?? "" }, signal: ctx.signal, allow: ctx.allow });
        const issue = issueView(data);
        return { text: `Opened #${issue.number}: ${issue.title} (${issue.url})`, data: issue };
      },
    },
    {
      name: "comment_issue",
      description: `Comment on an issue of the ${product} repository.`,
      input: t.Object({ number: t.Integer({ minimum: 1 }), body: t.String({ minLength: 1, maxLength: 65_000 }) }, { additionalProperties: false }),
      async run(args, ctx) {
        const { data } = await apiCall(product, `${api(ctx.config)}/repos/${repo(ctx.config)}/issues/${args.number}/comments`, { method: "POST", headers: headers(ctx.credentials), body: { body: args.body }, signal: ctx.signal, allow: ctx.allow });
        return { text: `Commented on #${args.number} (${(data as any).html_url ?? "done"})`, data: { id: (data as any).id, url: (data as any).html_url } };
      },
    },
  ];

  return {
    type: kind,
    description: kind === "github" ? "GitHub or GitHub Enterprise Server: issues of one repository" : "Gitea or Forgejo on your network: issues of one repository",
    config: t.Object(
      {
        base_url: t.Optional(t.String({ description: kind === "github" ? "API root (default https://api.github.com; GHES: https://host/api/v3)" : "Server root, e.g. http://gitea.internal:3000" })),
        owner: t.String({ minLength: 1, maxLength: 100 }),
        repo: t.String({ minLength: 1, maxLength: 100 }),
      },
      { additionalProperties: false },
    ),
    credentials: t.Object({ token: t.String({ minLength: 1, maxLength: 1000, description: "Personal access or bot token" }) }, { additionalProperties: false }),
    tools,
    async check(ctx) {
      const { data } = await apiCall(product, `${api(ctx.config)}/repos/${repo(ctx.config)}`, { headers: headers(ctx.credentials), signal: ctx.signal, allow: ctx.allow });
      return `${product} repository ${(data as { full_name?: string }).full_name ?? repo(ctx.config)} is reachable with these credentials`;
    },
  };
}

export const github = forge("github");
export const gitea = forge("gitea");
