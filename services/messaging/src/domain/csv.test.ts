import { describe, expect, it } from "vitest";
import { decodeFile, detectDelimiter, parseCsv } from "./csv.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("decodeFile", () => {
  it("strips a UTF-8 BOM", () => {
    expect(decodeFile(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes("Nom")]))).toEqual({
      ok: true,
      text: "Nom",
      charset: "utf-8",
    });
  });

  it("reads invalid UTF-8 as Windows-1252 (é is 0xE9, € is 0x80)", () => {
    expect(decodeFile(new Uint8Array([0x52, 0xe9, 0x6d, 0x79, 0x20, 0x80]))).toEqual({
      ok: true,
      text: "Rémy €",
      charset: "windows-1252",
    });
  });

  it("refuses invalid UTF-8 when UTF-8 was asked", () => {
    expect(decodeFile(new Uint8Array([0xe9]), "utf-8")).toMatchObject({ ok: false, reason: "invalid_encoding" });
  });
});

describe("parseCsv", () => {
  it("detects the semicolon of French Excel exports", () => expect(detectDelimiter('"a;b",c;d;e\n')).toBe(";"));

  it("keeps quoted separators, doubled quotes and line breaks, and numbers records by their first line", () => {
    const text = 'name,note\r\n"Doe, Jane","says ""hi""\r\non two lines"\r\n\r\nBob,plain\r\n';
    const p = parseCsv(text, ",");
    expect(p).toEqual({
      ok: true,
      delimiter: ",",
      header: ["name", "note"],
      records: [
        { line: 2, fields: ["Doe, Jane", 'says "hi"\r\non two lines'] },
        { line: 5, fields: ["Bob", "plain"] },
      ],
    });
  });

  it("reads a last record without a final line break", () =>
    expect(parseCsv("a;b\n1;2", ";")).toMatchObject({ ok: true, records: [{ line: 2, fields: ["1", "2"] }] }));

  it("refuses a file whose quote never closes (truncated), naming the line", () =>
    expect(parseCsv('a,b\n1,2\n3,"unfinished\n', ",")).toMatchObject({
      ok: false,
      reason: "unterminated_quote",
      line: 3,
    }));

  it("refuses an empty file", () => expect(parseCsv("\n\n", ",")).toMatchObject({ ok: false, reason: "empty_file" }));
});
