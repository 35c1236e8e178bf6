// Multipart bodies past a small size are parsed in a thread of their own (platform/http/multipart.ts),
// so a large upload's parse never holds the event loop; what comes back is what an inline parse gives.
import { describe, expect, test } from "bun:test";
import { blobBytes, formEntries, INLINE_BYTES, MultipartError } from "../../src/platform/http/multipart";
import { readBody } from "../../src/platform/http/body";

const random = (n: number) => {
  const out = new Uint8Array(n);
  for (let at = 0; at < n; at += 65536) crypto.getRandomValues(out.subarray(at, Math.min(n, at + 65536)));
  return out;
};

async function encode(fields: [string, string | File][]) {
  const fd = new FormData();
  for (const [k, v] of fields) fd.append(k, v);
  const res = new Response(fd);
  const contentType = res.headers.get("content-type")!;
  return { bytes: new Uint8Array(await res.arrayBuffer()), contentType };
}

const sha = (b: ArrayBuffer | Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

describe("multipart bodies", () => {
  test("a large body is parsed in the form thread: its chunks move there unjoined, files come back whole with name and type", async () => {
    const data = random(3 * 1024 * 1024 + 17);
    const { bytes, contentType } = await encode([
      ["file", new File([data], "report ü.pdf", { type: "application/pdf" })],
      ["product_id", "abc"],
      ["tag", "one"],
      ["tag", "two"],
    ]);
    expect(bytes.byteLength).toBeGreaterThan(INLINE_BYTES);
    // As a request body arrives: chunks of their own buffers (the last one shorter).
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < bytes.byteLength; at += 128 * 1024) chunks.push(bytes.slice(at, at + 128 * 1024));
    const entries = await formEntries(chunks, contentType);
    // Moved, not copied or joined: every chunk the caller held is empty now.
    expect(chunks.every((c) => c.byteLength === 0)).toBe(true);
    expect(entries.map(([k]) => k)).toEqual(["file", "product_id", "tag", "tag"]);
    const file = entries[0]![1] as File;
    expect(file).toBeInstanceOf(File);
    expect({ name: file.name, type: file.type, size: file.size }).toEqual({ name: "report ü.pdf", type: "application/pdf", size: data.byteLength });
    expect(sha(await file.arrayBuffer())).toBe(sha(data));
    expect(sha(await file.slice(1000, 300_000).arrayBuffer())).toBe(sha(data.subarray(1000, 300_000)));
    expect(entries.slice(1).map(([, v]) => v)).toEqual(["abc", "one", "two"]);
  });

  test("a small body is parsed where it is read and gives the same entries", async () => {
    const data = random(1000);
    const { bytes, contentType } = await encode([["file", new File([data], "a.txt", { type: "text/plain" })], ["x", "y"]]);
    const entries = await formEntries([bytes.subarray(0, 100), bytes.subarray(100)], contentType);
    expect(bytes.byteLength).toBeGreaterThan(0); // not moved
    const file = entries[0]![1] as File;
    expect(file.name).toBe("a.txt");
    expect(file.type).toStartWith("text/plain");
    expect(sha(await file.arrayBuffer())).toBe(sha(data));
    expect(entries[1]).toEqual(["x", "y"]);
  });

  test("a large body that is not multipart fails as such, from the thread too; the thread keeps serving", async () => {
    const junk = random(INLINE_BYTES * 4);
    await expect(formEntries([junk], "multipart/form-data; boundary=nope")).rejects.toBeInstanceOf(MultipartError);
    const request = new Request("http://x/", { method: "POST", body: random(INLINE_BYTES * 2), headers: { "content-type": "multipart/form-data; boundary=xyz" } });
    await expect(readBody(request, "multipart/form-data; boundary=xyz")).rejects.toThrow("not valid multipart/form-data");
    const { bytes, contentType } = await encode([["file", new File([random(INLINE_BYTES * 2)], "b.bin")]]);
    expect((await formEntries([bytes], contentType))[0]![0]).toBe("file");
  });

  test("a body without a declared length (chunked) is read whole and parsed", async () => {
    // No declared length: the 50,000-byte chunks go to the form thread as they came.
    const data = random(1300 * 1024 + 5);
    const { bytes, contentType } = await encode([["file", new File([data], "c.bin")]]);
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (at >= bytes.byteLength) return c.close();
        c.enqueue(bytes.slice(at, at + 50_000));
        at += 50_000;
      },
    });
    const request = new Request("http://x/", { method: "POST", body, headers: { "content-type": contentType } });
    expect(request.headers.get("content-length")).toBeNull();
    const parsed = (await readBody(request, contentType)) as { file: File };
    expect(parsed.file.size).toBe(data.byteLength);
    expect(sha(await parsed.file.arrayBuffer())).toBe(sha(data));
  });

  test("a file from the thread is copied out a MB per turn, byte for byte", async () => {
    const data = random(3 * 1024 * 1024 + 12345);
    const { bytes, contentType } = await encode([["file", new File([data], "a.wav")]]);
    const file = (await formEntries([bytes], contentType))[0]![1] as File;
    // Other callbacks run between the MBs: a chain of turns advances while 4 MB are copied.
    let turns = 0;
    let copying = true;
    const turn = () => copying && (turns++, setImmediate(turn));
    setImmediate(turn);
    const copied = await blobBytes(file);
    copying = false;
    expect(copied.byteLength).toBe(data.byteLength);
    expect(sha(copied)).toBe(sha(data));
    expect(turns).toBeGreaterThanOrEqual(3);
    expect((await blobBytes(new Blob([]))).byteLength).toBe(0);
  });
});
