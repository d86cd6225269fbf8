// Pi's google-generative-ai provider, for tests/providers/test_google_pi.py.
//
//   node scripts/pi_google.mjs <pi dir> '<json request>'
//
// <pi dir> holds node_modules/@earendil-works/pi-ai (bench/.pi). The request is
// {"cases": [{"model", "context", "options"}, ...]} in Pi's JSON. For each case Pi's
// streamSimple runs against model.baseUrl (the test's server on 127.0.0.1); the answer (stdout,
// JSON) is {"version", "results": [{"payload", "events", "message"}, ...]}: the request
// parameters Pi built (from onPayload), each event's type, index and delta, and the final
// message.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [piDir, requestJson] = process.argv.slice(2);
const root = join(piDir, "node_modules", "@earendil-works", "pi-ai");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const google = await import(pathToFileURL(join(root, "dist", "api", "google-generative-ai.js")).href);

const results = [];
for (const { model, context, options } of JSON.parse(requestJson).cases) {
	let payload = null;
	const stream = google.streamSimple(model, context, {
		...options,
		onPayload: (params) => {
			payload = structuredClone({ ...params, config: { ...params.config, abortSignal: undefined } });
		},
	});
	const events = [];
	for await (const event of stream) {
		events.push({ type: event.type, contentIndex: event.contentIndex, delta: event.delta });
	}
	results.push({ payload, events, message: await stream.result() });
}
process.stdout.write(JSON.stringify({ version: pkg.version, results }));
