// Configuration: defaults, env, flags winning, and one clear error per bad value.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/platform/config";

describe("config", () => {
  test("defaults match DESIGN.md", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ host: "127.0.0.1", port: 3000, rateLimit: 10, rateLimitStrict: 5, llmModel: "llama3.2", adminEmail: "admin@localhost", offline: false });
    expect(c.dataDir.endsWith("/data")).toBe(true);
    expect(c.adminPassword).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
  });

  test("flags win over env vars, in both spellings", () => {
    const c = loadConfig({ HEARTH_PORT: "4000", HEARTH_HOST: "0.0.0.0" }, ["--port", "5000", "--rate-limit=7", "--offline"]);
    expect(c.port).toBe(5000);
    expect(c.host).toBe("0.0.0.0");
    expect(c.rateLimit).toBe(7);
    expect(c.offline).toBe(true);
  });

  test("bad values name the variable or flag", () => {
    const cases: [Record<string, string>, string[], RegExp][] = [
      [{ HEARTH_PORT: "http" }, [], /HEARTH_PORT must be a whole number/],
      [{ HEARTH_PORT: "70000" }, [], /HEARTH_PORT must be between/],
      [{}, ["--port", "x"], /--port must be a whole number/],
      [{ HEARTH_OLLAMA_URL: "ftp://x" }, [], /HEARTH_OLLAMA_URL/],
      [{ HEARTH_RATE_LIMIT: "0" }, [], /HEARTH_RATE_LIMIT/],
      [{ HEARTH_ADMIN_PASSWORD: "short" }, [], /HEARTH_ADMIN_PASSWORD/],
      [{ HEARTH_JWT_SECRET: "short" }, [], /HEARTH_JWT_SECRET/],
      [{ HEARTH_OFFLINE: "maybe" }, [], /HEARTH_OFFLINE/],
      [{}, ["--nope"], /unknown option --nope/],
      [{}, ["--port"], /needs a value/],
    ];
    for (const [env, args, re] of cases) {
      expect(() => loadConfig(env, args)).toThrow(ConfigError);
      expect(() => loadConfig(env, args)).toThrow(re);
    }
  });
});
