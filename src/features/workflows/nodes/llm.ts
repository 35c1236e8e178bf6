// The llm node: one prompt to the configured model, streamed as `token` events.
import { t } from "elysia";
import type { Llm, LlmMessage } from "../../../platform/llm/llm";
import { RetryableError, type NodeType } from "./node-type";

const MAX_ANSWER_TOKENS = 2048;

export function llmNode(llm: Llm): NodeType<{ prompt: string; system?: string; model?: string; format?: "json" }> {
  return {
    type: "llm",
    description: "Asks the language model; output {text}, or {json} with format json. Tokens stream as events.",
    config: t.Object(
      {
        prompt: t.String({ minLength: 1, maxLength: 100_000 }),
        system: t.Optional(t.String({ maxLength: 20_000 })),
        model: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
        format: t.Optional(t.Literal("json")),
      },
      { additionalProperties: false },
    ),
    async run(c, ctx) {
      const model = c.model ?? llm.defaultModel;
      const status = await llm.status(model);
      if (status.state !== "ok") {
        llm.forget(model);
        throw new RetryableError(`the language model is unavailable: ${status.reason}`);
      }
      const messages: LlmMessage[] = [...(c.system ? [{ role: "system" as const, content: c.system }] : []), { role: "user", content: c.prompt }];
      let text = "";
      for await (const piece of llm.stream({ model, messages, contextLength: status.contextLength, maxAnswerTokens: MAX_ANSWER_TOKENS, signal: ctx.signal, format: c.format })) {
        if ("delta" in piece) {
          text += piece.delta;
          ctx.token(piece.delta);
        }
      }
      if (c.format !== "json") return { output: { text } };
      try {
        return { output: { json: JSON.parse(text) } };
      } catch {
        throw new Error(`the model did not answer valid JSON: ${text.slice(0, 200)}`);
      }
    },
  };
}
