// Pi's own openai-responses provider run against a test server, for
// tests/providers/test_openai_responses_pi.py.
//
//   node scripts/pi_responses.mjs <pi dir> '<json request>'
//
// <pi dir> holds node_modules/@earendil-works/pi-ai (bench/.pi). The request is
// {"model": <Pi model>, "context": <Pi context>, "options": <Pi simple-stream options>}; the
// model's baseUrl points at the test server, which answers with the SSE the test queued.
// The answer (stdout, JSON) is {"version", "events": [event type, ...], "message": <the final
// assistant message>}: what Pi's streamSimple makes of that stream.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [piDir, requestJson] = process.argv.slice(2);
const root = join(piDir, "node_modules", "@earendil-works", "pi-ai");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const responses = await import(pathToFileURL(join(root, "dist", "api", "openai-responses.js")).href);

const request = JSON.parse(requestJson);
const events = [];
let message = null;
for await (const event of responses.streamSimple(request.model, request.context, request.options)) {
	events.push(event.type);
	if (event.type === "done") message = event.message;
	if (event.type === "error") message = event.error;
}
process.stdout.write(JSON.stringify({ version: pkg.version, events, message }));
