// Pi's side of bench/bench_loop.py: the same workloads on @earendil-works/pi-agent-core's Agent
// driven by @earendil-works/pi-ai's faux provider (token size 1 = 4-character chunks).
//
//   node bench/pi_loop_bench.mjs <dir holding node_modules> <json config>
//
// Prints one JSON object on stdout. bench_loop.py installs the packages and runs this script;
// it is not meant to be run on its own (but can be, after `python bench/bench_loop.py` once).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [piDir, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);

async function importPackage(name) {
	const root = join(piDir, "node_modules", ...name.split("/"));
	const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
	const entry = pkg.exports?.["."]?.import ?? pkg.main;
	return { mod: await import(pathToFileURL(join(root, entry)).href), version: pkg.version };
}

const { mod: core, version: coreVersion } = await importPackage("@earendil-works/pi-agent-core");
const { mod: ai, version: aiVersion } = await importPackage("@earendil-works/pi-ai");
const { Agent } = core;
const { createFauxCore, fauxAssistantMessage, fauxText, fauxToolCall } = ai;

const TOOL = {
	name: "step",
	label: "Step",
	description: "Advance one step.",
	parameters: {
		type: "object",
		properties: { i: { type: "integer" } },
		required: ["i"],
	},
	execute: async (_id, _params, _signal, _onUpdate) => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

function loopResponses(turns, chars) {
	const text = "abcd".repeat(chars / 4);
	const responses = [];
	for (let i = 0; i < turns; i++) {
		responses.push(
			fauxAssistantMessage([fauxText(text), fauxToolCall("step", { i }, { id: `call_${i}` })], {
				stopReason: "toolUse",
			}),
		);
	}
	responses.push(fauxAssistantMessage("All done."));
	return responses;
}

function deltaResponses(deltas) {
	return [fauxAssistantMessage("abcd".repeat(deltas))];
}

async function runOnce(responses) {
	const faux = createFauxCore({ tokenSize: { min: 1, max: 1 } });
	faux.setResponses(responses);
	const agent = new Agent({
		initialState: { model: faux.getModel(), tools: [TOOL], systemPrompt: "You are a benchmark." },
		streamFn: faux.stream,
	});
	const counts = { events: 0, deltas: 0 };
	agent.subscribe((event, _signal) => {
		counts.events++;
		if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") counts.deltas++;
	});
	if (globalThis.gc) globalThis.gc();
	const t0 = process.hrtime.bigint();
	const c0 = process.cpuUsage();
	await agent.prompt("Go.");
	const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
	const used = process.cpuUsage(c0);
	const cpu = (used.user + used.system) / 1e6;
	const last = agent.state.messages[agent.state.messages.length - 1];
	if (agent.state.errorMessage || last.stopReason !== "stop") {
		throw new Error(`run failed: ${agent.state.errorMessage ?? last.stopReason}`);
	}
	return { seconds, cpu, events: counts.events, deltas: counts.deltas, messages: agent.state.messages.length };
}

async function bestOf(makeResponses, repeat, warmup) {
	for (let i = 0; i < warmup; i++) await runOnce(makeResponses());
	const runs = [];
	for (let i = 0; i < repeat; i++) runs.push(await runOnce(makeResponses()));
	const best = runs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
	const cpu = Math.min(...runs.map((r) => r.cpu));
	return { ...best, cpu, all_seconds: runs.map((r) => r.seconds) };
}

const result = {
	runtime: `node ${process.version}`,
	packages: { "pi-agent-core": coreVersion, "pi-ai": aiVersion },
	gc_exposed: Boolean(globalThis.gc),
	loop: await bestOf(() => loopResponses(config.turns, config.chars), config.repeat, config.warmup),
	deltas: {},
};
for (const n of config.delta_sizes) {
	result.deltas[n] = await bestOf(() => deltaResponses(n), config.repeat, config.warmup);
}
process.stdout.write(JSON.stringify(result) + "\n");
