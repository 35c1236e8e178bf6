// TypeBox validators compiled at their first use and kept per schema: Hearth holds dozens (node
// configs, connector settings, agent templates, tool inputs) and a start compiled all of them,
// ~10 ms of every cold start for checks most runs never make.
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

export function validatorFor<T extends TSchema>(schema: T): TypeCheck<T> {
  let v = compiled.get(schema) as TypeCheck<T> | undefined;
  if (!v) compiled.set(schema, (v = TypeCompiler.Compile(schema)));
  return v;
}
