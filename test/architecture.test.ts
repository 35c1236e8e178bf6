// The layering rules of STYLE.md, checked on every import of src/ (static, re-exported and dynamic),
// read with TypeScript's own parser: they held by discipline alone before.
//   platform/ is shared ground: it never reaches into a feature;
//   a route calls its feature's service, never a table or the query builder;
//   only the HTTP layer builds Elysia apps (services and the rest take schemas and types at most);
//   the console is browser code: it imports nothing of the server;
//   every feature's routes come from one factory shape, xRoutes({ auth, ...deps }), and take their
//   schemas from the feature's model.ts.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const ROOT = resolve(import.meta.dir, "..");
const SRC = join(ROOT, "src");

interface Import {
  /** The file that imports, relative to the project root (src/...). */
  from: string;
  /** The module as written. */
  specifier: string;
  /** The imported file relative to the project root, for a relative specifier. */
  target?: string;
  /** The names a static import binds, less those marked `type` one by one (empty for a side-effect, namespace or dynamic import). */
  names: string[];
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith(".d.ts"))
    .map((f) => join(dir, f));
}

/** Every source file of src/, read and parsed once, by its path relative to the project root. */
const parsed = new Map(
  sourceFiles(SRC).map((file) => [
    relative(ROOT, file),
    ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS),
  ]),
);

function importsOf(from: string, sf: ts.SourceFile): Import[] {
  const file = sf.fileName;
  const out: Import[] = [];
  const add = (specifier: string, names: string[] = []) => {
    const target = specifier.startsWith(".") ? relative(ROOT, resolve(dirname(file), specifier)) : undefined;
    out.push({ from, specifier, target, names });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : [];
      const values = named.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text);
      if (clause?.name) values.push("default");
      add(node.moduleSpecifier.text, values);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      add(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

const imports = [...parsed].flatMap(([from, sf]) => importsOf(from, sf));
const under = (dir: string) => (path: string | undefined) => path !== undefined && (path + "/").startsWith(`src/${dir}/`);
const inPlatform = under("platform");
const inFeatures = under("features");
const inConsole = under("console");
const isRoute = (path: string) => inFeatures(path) && /(^|\/|-)routes\.ts$/.test(path);
/** Where Elysia apps are built: the app, the feature routes and the platform's HTTP plumbing (auth, errors, explorer, console). */
const isHttpLayer = (path: string) => path === "src/app.ts" || isRoute(path) || under("platform/http")(path) || path === "src/platform/auth/plugin.ts";
const show = (found: Import[]) => found.map((i) => `${i.from} imports ${i.specifier}`);
const routeFiles = [...parsed].filter(([path]) => isRoute(path));

describe("architecture", () => {
  test("the rules see the imports (a sanity check of the scan itself)", () => {
    expect(imports.length).toBeGreaterThan(300);
    expect(imports.some((i) => i.from === "src/app.ts" && i.specifier === "elysia" && i.names.includes("Elysia"))).toBe(true);
    expect(imports.some((i) => isRoute(i.from))).toBe(true);
    expect(imports.some((i) => inConsole(i.from))).toBe(true);
  });

  test("platform/ never imports a feature", () => {
    expect(show(imports.filter((i) => inPlatform(i.from) && inFeatures(i.target)))).toEqual([]);
  });

  test("a route never imports a table or the query builder: it calls its feature's service", () => {
    const tableOrQuery = (i: Import) => i.specifier.startsWith("drizzle-orm") || /(^|\/)table(\.ts)?$/.test(i.specifier);
    expect(show(imports.filter((i) => isRoute(i.from) && tableOrQuery(i)))).toEqual([]);
  });

  test("only the HTTP layer builds Elysia apps; a service imports nothing of Elysia", () => {
    const buildsApps = (i: Import) => i.specifier.startsWith("@elysiajs/") || (i.specifier === "elysia" && i.names.includes("Elysia"));
    expect(show(imports.filter((i) => !isHttpLayer(i.from) && buildsApps(i)))).toEqual([]);
    const service = (path: string) => /(^|\/)service\.ts$/.test(path);
    expect(show(imports.filter((i) => service(i.from) && (i.specifier === "elysia" || i.specifier.startsWith("@elysiajs/"))))).toEqual([]);
  });

  test("every feature's routes come from one factory shape: xRoutes({ auth, ...deps })", () => {
    const odd: string[] = [];
    for (const [path, sf] of routeFiles) {
      for (const node of sf.statements) {
        if (!ts.isFunctionDeclaration(node) || !node.name?.text.endsWith("Routes")) continue;
        const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
        const [only, ...more] = node.parameters;
        const oneObject = only !== undefined && more.length === 0 && (ts.isObjectBindingPattern(only.name) || (only.type !== undefined && ts.isTypeLiteralNode(only.type)));
        if (exported && !oneObject) odd.push(`${path}: ${node.name.text}`);
      }
    }
    expect(odd).toEqual([]);
  });

  test("a route file defines no schema of its own: they live in its feature's model.ts", () => {
    const defined: string[] = [];
    for (const [path, sf] of routeFiles) {
      for (const node of sf.statements) {
        if (!ts.isVariableStatement(node)) continue;
        for (const d of node.declarationList.declarations) {
          const init = d.initializer;
          const builder = init && ts.isCallExpression(init) && ts.isPropertyAccessExpression(init.expression) && ts.isIdentifier(init.expression.expression) && init.expression.expression.text === "t";
          if (builder) defined.push(`${path}: ${d.name.getText(sf)}`);
        }
      }
    }
    expect(defined).toEqual([]);
  });

  test("the console imports nothing of the server (it is shipped to browsers)", () => {
    expect(show(imports.filter((i) => inConsole(i.from) && i.target !== undefined && !inConsole(i.target)))).toEqual([]);
  });
});
