// Builds the panel's front end for the wheel: panel.js with its imports bundled into one
// minified ES module, and panel.css minified, both written to
// pi_notebook/notebook/panel/_build/ (git-ignored; the wheel ships it, the kernel loads it
// when it is newer than the sources). `node --test js/` tests the sources, not this output.
//
//   cd js && npm ci && npm run build
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const out = fileURLToPath(new URL("../pi_notebook/notebook/panel/_build/", import.meta.url));
const common = { bundle: true, minify: true, legalComments: "none", logLevel: "warning" };
await build({ ...common, entryPoints: [fileURLToPath(new URL("panel.js", import.meta.url))],
  format: "esm", target: "es2020", outfile: `${out}panel.js` });
await build({ ...common, entryPoints: [fileURLToPath(new URL("panel.css", import.meta.url))],
  outfile: `${out}panel.css` });
console.log(`built ${out}panel.js and panel.css`);
