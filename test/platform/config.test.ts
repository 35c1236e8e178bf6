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

  test("good addresses and lists pass as given", () => {
    const c = loadConfig({ HEARTH_HOST: "::1", HEARTH_HTTP_ALLOW: "10.0.0.0/8, fd00::/8, 192.168.1.7, gpu-box, ollama.lan", HEARTH_LLM_PROVIDER: "openai", HEARTH_LLM_URL: "http://gpu-box:8000/v1" });
    expect(c.host).toBe("::1");
    expect(c.httpAllow).toBe("10.0.0.0/8, fd00::/8, 192.168.1.7, gpu-box, ollama.lan");
    for (const h of ["localhost", "0.0.0.0", "hearth.example.lan", "192.168.0.10"]) expect(loadConfig({ HEARTH_HOST: h }).host).toBe(h);
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
      // Before: a prefix out of range passed here and stopped the start later without naming the variable.
      [{ HEARTH_HTTP_ALLOW: "10.0.0.0/99" }, [], /HEARTH_HTTP_ALLOW: "10.0.0.0\/99" is not a host name, an address or a CIDR/],
      [{ HEARTH_HTTP_ALLOW: "::1/200" }, [], /HEARTH_HTTP_ALLOW: "::1\/200"/],
      [{ HEARTH_HTTP_ALLOW: "gpu-box/8" }, [], /HEARTH_HTTP_ALLOW: "gpu-box\/8"/],
      [{ HEARTH_HTTP_ALLOW: "10.0.0.0/8/1" }, [], /HEARTH_HTTP_ALLOW/],
      // Before: checked only when listening, after the database and the first owner were made.
      [{ HEARTH_HOST: "999.1.1.1" }, [], /HEARTH_HOST must be an IP address or a host name/],
      [{}, ["--host", "not a host"], /--host must be an IP address or a host name/],
      // Before: started, and asked http://127.0.0.1:8000/v1, which nothing had said.
      [{ HEARTH_LLM_PROVIDER: "openai" }, [], /HEARTH_LLM_PROVIDER=openai needs HEARTH_LLM_URL/],
    ];
    for (const [env, args, re] of cases) {
      expect(() => loadConfig(env, args)).toThrow(ConfigError);
      expect(() => loadConfig(env, args)).toThrow(re);
    }
  });
});
