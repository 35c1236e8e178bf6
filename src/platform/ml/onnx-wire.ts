// The protobuf wire format, as far as editing an ONNX model needs it: a message read as a list
// of fields that point into the bytes read (nothing copied), and messages written as lists of
// pieces joined once, at the end, so a 30 MB model is copied once however deep the edit.

export const LENGTH_DELIMITED = 2;

export interface Field {
  no: number;
  wire: number;
  /** The whole field, key included. */
  raw: Uint8Array;
  /** The payload of a length-delimited field. */
  body?: Uint8Array;
  /** The value of a varint field. */
  value?: number;
}

/** An encoded message as pieces in order (the bytes of unchanged fields are shared, not copied). */
export type Pieces = Uint8Array[];

function readVarint(b: Uint8Array, at: number): { value: number; at: number } {
  let value = 0;
  for (let scale = 1; ; scale *= 128) {
    if (at >= b.length) throw new Error("ONNX model ends inside a varint");
    const byte = b[at++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return { value, at };
  }
}

function varint(value: number): number[] {
  const out: number[] = [];
  for (; value >= 0x80; value = Math.floor(value / 128)) out.push((value % 128) | 0x80);
  out.push(value);
  return out;
}

export function fields(b: Uint8Array): Field[] {
  const out: Field[] = [];
  for (let at = 0; at < b.length; ) {
    const start = at;
    const key = readVarint(b, at);
    at = key.at;
    const wire = key.value & 7;
    let value: number | undefined;
    let body: Uint8Array | undefined;
    if (wire === 0) ({ value, at } = readVarint(b, at));
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === LENGTH_DELIMITED) {
      const length = readVarint(b, at);
      at = length.at + length.value;
      body = b.subarray(length.at, at);
    } else throw new Error(`ONNX model has an unknown protobuf wire type ${wire}`);
    if (at > b.length) throw new Error("ONNX model field runs past its end");
    out.push({ no: Math.floor(key.value / 8), wire, raw: b.subarray(start, at), body, value });
  }
  return out;
}

const decoder = new TextDecoder();

/** The strings of field `no` in `msg`. */
export const strings = (msg: Uint8Array, no: number) => fields(msg).flatMap((f) => (f.no === no && f.body ? [decoder.decode(f.body)] : []));

/** The integers of a repeated varint field `no` in `msg`, packed or not. */
export function integers(msg: Uint8Array, no: number): number[] {
  const out: number[] = [];
  for (const f of fields(msg)) {
    if (f.no !== no) continue;
    if (f.value !== undefined) out.push(f.value);
    else if (f.body) {
      for (let at = 0; at < f.body.length; ) {
        const v = readVarint(f.body, at);
        out.push(v.value);
        at = v.at;
      }
    }
  }
  return out;
}

export const byteLength = (p: Pieces) => p.reduce((n, x) => n + x.length, 0);

/** A length-delimited field around `body`. */
export const message = (no: number, body: Pieces): Pieces => [Uint8Array.from([...varint(no * 8 + LENGTH_DELIMITED), ...varint(byteLength(body))]), ...body];

export const text = (no: number, s: string): Pieces => message(no, [new TextEncoder().encode(s)]);

export const integer = (no: number, value: number): Pieces => [Uint8Array.from([...varint(no * 8), ...varint(value)])];

export function join(p: Pieces): Uint8Array {
  const out = new Uint8Array(byteLength(p));
  let at = 0;
  for (const x of p) {
    out.set(x, at);
    at += x.length;
  }
  return out;
}
