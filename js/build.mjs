// Builds the panel's front end: panel.js with its imports bundled into one minified ES module,
// and panel.css minified, written to pi_notebook/notebook/panel/_build/. That build is
// committed: the kernel sends it to every view, the wheel ships it, and a checkout installed
// with `pip install -e .` (no node) has a working panel. `node --test js/` tests the sources.
//
//   cd js && npm ci && npm run build      # after editing js/: rebuild, commit _build/ with it
//   cd js && npm run check                # CI: fails when the committed build is stale
//
// The module opens with a banner naming the sha256 of the sources it was built from (every
// *.js and *.css file directly in js/, by name: "name\n", its size in bytes, "\n", its bytes),
// so tests/panel/test_frontend.py can tell, without node, that a source changed after the
// build. The check rebuilds in memory and compares byte for byte (esbuild's version is the
// one package-lock.json pins).
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const out = fileURLToPath(new URL("../pi_notebook/notebook/panel/_build/", import.meta.url));
const shown = "pi_notebook/notebook/panel/_build/";
const check = process.argv.includes("--check");

function sourcesDigest() {
  const hash = createHash("sha256");
  const names = readdirSync(here).filter((name) => /\.(js|css)$/.test(name)).sort();
  for (const name of names) {
    const bytes = readFileSync(`${here}${name}`);
    hash.update(`${name}\n${bytes.length}\n`);
    hash.update(bytes);
  }
  return hash.digest("hex");
}

const common = { bundle: true, minify: true, legalComments: "none", logLevel: "warning", write: false };
const banner = `/* pi-notebook panel, built by js/build.mjs; sources sha256:${sourcesDigest()} */`;
const built = [
  ...(await build({ ...common, entryPoints: [`${here}panel.js`], format: "esm", target: "es2020",
    outfile: `${out}panel.js`, banner: { js: banner } })).outputFiles,
  ...(await build({ ...common, entryPoints: [`${here}panel.css`], outfile: `${out}panel.css` })).outputFiles,
];

if (check) {
  const stale = built.filter((file) => {
    try {
      return !readFileSync(file.path).equals(Buffer.from(file.contents));
    } catch {
      return true; // missing
    }
  });
  if (stale.length) {
    const names = stale.map((file) => shown + file.path.slice(out.length)).join(", ");
    console.error(`stale front-end build: ${names} is not what js/ builds to.`);
    console.error("Run `cd js && npm ci && npm run build` and commit pi_notebook/notebook/panel/_build/.");
    process.exit(1);
  }
  console.log(`${shown}panel.js and panel.css are what js/ builds to`);
} else {
  mkdirSync(out, { recursive: true });
  for (const file of built) writeFileSync(file.path, file.contents);
  console.log(`built ${shown}panel.js and panel.css`);
}
