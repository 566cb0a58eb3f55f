// Turns a fleet's export of what it taught (`npm run wording:export -w @transferops/evidence`,
// ../taught-export.ts) into labelled texts of the corpus (corpus.jsonl), each with its source
// ("fleet: <deployment> …, taught rule <id> v<n>") and its part by hash (heldoutByHash: about a
// third held out, as every real text). A text already in the corpus is skipped.
//
//   npm run corpus:add-taught -- taught.json            # appends to corpus.jsonl
//   npm run corpus:add-taught -- taught.json --dry-run  # prints what it would add

import { appendFileSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { TAUGHT_EXPORT_FORMAT, type TaughtExport } from "../taught-export.ts";
import { heldoutByHash, loadTestdata, type Labelled } from "./drift.ts";

/** The corpus entries an export adds to `corpus` (texts it already has are left out). */
export function corpusEntries(exported: TaughtExport, corpus: readonly Labelled[]): Labelled[] {
  if (exported.format !== TAUGHT_EXPORT_FORMAT) throw new Error(`not a taught-wordings export: ${exported.format}`);
  if (!/^\S+$/.test(exported.from)) throw new Error(`the export's "from" must be one word: ${exported.from}`);
  const seen = new Set(corpus.map((t) => t.text));
  const ids = new Set(corpus.map((t) => t.id));
  const added: Labelled[] = [];
  for (const rule of exported.rules) {
    rule.examples.forEach((example, n) => {
      if (seen.has(example.text)) return;
      seen.add(example.text);
      let id = `fleet-${exported.from}-${rule.rule_id.slice(0, 8)}-v${rule.version}-${n + 1}`;
      while (ids.has(id)) id += "b";
      ids.add(id);
      added.push({
        id,
        operator: rule.operator,
        country: exported.country,
        kind: rule.kind,
        text: example.text,
        expected: { ...example.expected } as Labelled["expected"],
        source: `fleet: ${exported.from} export ${exported.exported_at}, taught rule ${rule.rule_id} v${rule.version}`,
        split: heldoutByHash(example.text) ? "heldout" : "dev",
      });
    });
  }
  return added;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { "dry-run": { type: "boolean", default: false } },
  });
  if (positionals.length !== 1) {
    process.stderr.write("usage: corpus:add-taught -- <export.json> [--dry-run]\n");
    process.exit(2);
  }
  const exported = JSON.parse(readFileSync(positionals[0]!, "utf8")) as TaughtExport;
  const added = corpusEntries(exported, loadTestdata("corpus.jsonl"));
  const lines = added.map((t) => JSON.stringify(t)).join("\n");
  if (values["dry-run"]) process.stdout.write(`${lines}\n`);
  else if (added.length) appendFileSync(new URL("./corpus.jsonl", import.meta.url), `${lines}\n`);
  process.stderr.write(
    `${added.length} texts ${values["dry-run"] ? "would be added" : "added"} (${added.filter((t) => t.split === "heldout").length} held out)\n`,
  );
}
