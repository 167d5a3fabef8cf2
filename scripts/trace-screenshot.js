#!/usr/bin/env node
// trace-screenshot.js — a PNG of one process of an `iommulab --trace` file over a time window,
// as Catapult's trace viewer (the viewer of chrome://tracing) draws it, in headless Chromium
// (docs/trace.md). For the documentation's picture only: not part of the tests or CI.
//
// usage: node scripts/trace-screenshot.js TRACE PROCESS-SUBSTRING T0_US T1_US OUT.png [WIDTH HEIGHT]
//
// T0_US and T1_US are simulated times as in the trace's `ts`. Needs Debian's `chromium` and
// `python3`, the npm package playwright-core (found through NODE_PATH), and a checkout of
// Catapult (github.com/catapult-project/catapult) named by the CATAPULT environment variable:
// its tracing/bin/trace2html writes the viewer and the trace as one HTML page.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
let chromium;
try {
	({ chromium } = require('playwright-core'));
} catch (e) {
	console.error('playwright-core not found: npm install --prefix DIR playwright-core, NODE_PATH=DIR/node_modules');
	process.exit(2);
}

function usage(msg) {
	console.error(msg || 'usage: trace-screenshot.js TRACE PROCESS-SUBSTRING T0_US T1_US OUT.png [WIDTH HEIGHT]');
	process.exit(2);
}

// The trace with only the process whose name contains `which`; the other top-level keys
// are kept: displayTimeUnit "ns" makes Catapult nest slices to the ns, not the us.
function oneProcess(trace, which) {
	const doc = JSON.parse(fs.readFileSync(trace, 'utf8'));
	const pids = doc.traceEvents.filter(e => e.ph === 'M' && e.name === 'process_name' &&
					    e.args.name.includes(which)).map(e => e.pid);
	if (pids.length !== 1)
		usage(`${pids.length} processes match '${which}'`);
	doc.traceEvents = doc.traceEvents.filter(e => e.pid === pids[0]);
	return doc;
}

// Catapult counts time in ms from the trace's first event: zoom to [t0, t1] (us from that
// event) and hide the analysis panel below the tracks.
async function zoom(page, t0, t1) {
	await page.waitForFunction(() => {
		const v = document.querySelector('tr-ui-timeline-view');
		return v && v.model && v.trackView && v.trackView.viewport.modelTrackContainer;
	}, null, { timeout: 120000 });
	await page.evaluate(() => {
		const v = document.querySelector('tr-ui-timeline-view');
		v.$.drag_handle.style.display = 'none';
		v.$.analysis.style.display = 'none';
		const mouseMode = document.querySelector('tr-ui-b-mouse-mode-selector');
		if (mouseMode)
			mouseMode.style.display = 'none';
	});
	/* let the viewer lay out and set its initial view, which would undo the zoom */
	await page.waitForTimeout(1000);
	await page.evaluate(([t0, t1]) => {
		const v = document.querySelector('tr-ui-timeline-view');
		const vp = v.trackView.viewport;
		const dt = new tr.ui.TimelineDisplayTransform();
		dt.set(vp.currentDisplayTransform);
		dt.xSetWorldBounds(v.model.bounds.min + t0 / 1000, v.model.bounds.min + t1 / 1000,
				   vp.modelTrackContainer.canvas.clientWidth);
		vp.setDisplayTransformImmediately(dt);
	}, [t0, t1]);
}

async function main() {
	const a = process.argv.slice(2);
	if (a.length !== 5 && a.length !== 7)
		usage();
	const [trace, which, t0, t1, out] = a;
	const [width, height] = a.length === 7 ? [+a[5], +a[6]] : [1400, 1260];
	const trace2html = path.join(process.env.CATAPULT || '', 'tracing', 'bin', 'trace2html');
	if (!fs.existsSync(trace2html))
		usage('set CATAPULT to a Catapult checkout (tracing/bin/trace2html)');
	const doc = oneProcess(trace, which);
	const first = Math.min(...doc.traceEvents.filter(e => e.ph !== 'M').map(e => e.ts));
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trace-shot-'));
	const part = path.join(dir, path.basename(trace)), page = path.join(dir, 'trace.html');
	fs.writeFileSync(part, JSON.stringify(doc));
	/* relative, so that the viewer's title names the trace, not the temporary folder */
	execFileSync('python3', [trace2html, path.basename(part), '--output', page],
		     { cwd: dir, stdio: 'ignore' });
	const browser = await chromium.launch({ executablePath: '/usr/bin/chromium',
						args: ['--no-sandbox'] });
	try {
		const p = await browser.newPage({ viewport: { width, height } });
		await p.goto('file://' + page);
		await zoom(p, t0 - first, t1 - first);
		await p.waitForTimeout(500);
		await p.screenshot({ path: out });
	} finally {
		await browser.close();
		fs.rmSync(dir, { recursive: true });
	}
	console.log(`${out}: ${which}, ${t0}-${t1} us (${(t0 - first).toFixed(3)}-` +
		    `${(t1 - first).toFixed(3)} us in the viewer), ${width}x${height}`);
}

main().catch(e => { console.error(e.message); process.exit(1); });
