// CSV files as people bring them: UTF-8 with or without BOM, UTF-16 with BOM, or
// Windows-1252 (Excel's "CSV" on Windows); comma, semicolon (Excel in French locales) or
// tab separated; quoted fields with doubled quotes and line breaks inside; CRLF, LF or CR.
// A file that cannot be read as a whole (an open quote at the end: a truncated file) is
// refused before anything is written.

export type Charset = "utf-8" | "utf-16le" | "windows-1252";
export type Delimiter = "," | ";" | "\t";

export type Decoded = { ok: true; text: string; charset: Charset } | { ok: false; reason: string; detail: string };

/** Bytes → text: the BOM decides; else valid UTF-8 is UTF-8 and anything else Windows-1252. */
export function decodeFile(bytes: Uint8Array, requested: "auto" | Charset = "auto"): Decoded {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    return { ok: true, text: new TextDecoder("utf-8").decode(bytes.subarray(3)), charset: "utf-8" };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return { ok: true, text: new TextDecoder("utf-16le").decode(bytes.subarray(2)), charset: "utf-16le" };
  }
  if (requested === "windows-1252" || requested === "utf-16le") {
    return { ok: true, text: new TextDecoder(requested).decode(bytes), charset: requested };
  }
  try {
    return { ok: true, text: new TextDecoder("utf-8", { fatal: true }).decode(bytes), charset: "utf-8" };
  } catch {
    if (requested === "utf-8") {
      return { ok: false, reason: "invalid_encoding", detail: "The file is not valid UTF-8" };
    }
    return { ok: true, text: new TextDecoder("windows-1252").decode(bytes), charset: "windows-1252" };
  }
}

/** The separator of the header line: the most frequent of `,` `;` and tab outside quotes. */
export function detectDelimiter(text: string): Delimiter {
  const counts = { ",": 0, ";": 0, "\t": 0 };
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === "\n" || ch === "\r")) break;
    else if (!quoted && ch in counts) counts[ch as Delimiter]++;
  }
  const best = (Object.entries(counts) as [Delimiter, number][]).sort((a, b) => b[1] - a[1])[0];
  return best[1] > 0 ? best[0] : ",";
}

export interface CsvRecord {
  /** Line of the file where the record starts (1-based). */
  line: number;
  fields: string[];
}

export type Parsed =
  | { ok: true; header: string[]; records: CsvRecord[]; delimiter: Delimiter }
  | { ok: false; reason: string; detail: string; line?: number };

/** RFC 4180 with the usual leniencies; blank lines are skipped. */
export function parseCsv(text: string, delimiter: Delimiter): Parsed {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let start = 1;
  let quoteLine = 0;
  const endRecord = () => {
    fields.push(field);
    if (fields.length > 1 || fields[0] !== "") records.push({ line: start, fields });
    fields = [];
    field = "";
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === "\n" || (ch === "\r" && text[i + 1] !== "\n")) line++;
        field += ch;
      }
    } else if (ch === '"' && field === "") {
      quoted = true;
      quoteLine = line;
    } else if (ch === delimiter) {
      fields.push(field);
      field = "";
    } else if (ch === "\r" || ch === "\n") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      endRecord();
      line++;
      start = line;
    } else field += ch;
  }
  if (quoted) {
    return {
      ok: false,
      reason: "unterminated_quote",
      detail: `A quoted field opened on line ${quoteLine} never closes: the file is truncated or malformed`,
      line: quoteLine,
    };
  }
  endRecord();
  const [header, ...rest] = records;
  if (!header) return { ok: false, reason: "empty_file", detail: "The file has no header line" };
  return { ok: true, header: header.fields.map((h) => h.trim()), records: rest, delimiter };
}
