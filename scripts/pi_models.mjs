// Pi's own view of some models and of their cost, for tests/providers/test_catalog_pi.py.
//
//   node scripts/pi_models.mjs <pi dir> '<json request>'
//
// <pi dir> holds node_modules/@earendil-works/pi-ai (bench/.pi). The request is
// {"models": [[provider, id], ...], "usages": [usage, ...]} with usages in Pi's shape; the
// answer (stdout, JSON) is {"models": [model or null, ...], "costs": [[cost per usage], ...]}:
// getBuiltinModel() and calculateCost() as Pi computes them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [piDir, requestJson] = process.argv.slice(2);
const root = join(piDir, "node_modules", "@earendil-works", "pi-ai");
const dist = (file) => import(pathToFileURL(join(root, "dist", file)).href);
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const ai = await dist("index.js");
const all = await dist("providers/all.js");

const request = JSON.parse(requestJson);
const models = request.models.map(([provider, id]) => {
	try {
		return all.getBuiltinModel(provider, id) ?? null;
	} catch {
		return null;
	}
});
const costs = models.map((model) =>
	model === null
		? null
		: request.usages.map((usage) =>
				ai.calculateCost(model, { ...usage, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }),
			),
);
process.stdout.write(JSON.stringify({ version: pkg.version, models, costs }));
