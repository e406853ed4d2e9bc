// The reference for vaider-visual's fixture parity test: npm pixelmatch 7.2 run on pairs of
// PNGs with the given options, writing pixelmatch's own diff image for each.
// Usage: node tests/visual/pixelmatch-jobs.mjs JOBS.json
// JOBS.json: [{"a": "1a.png", "b": "1b.png", "out": "diff.png", "options": {...}}, ...]
// (`options` are pixelmatch's own: threshold, includeAA, alpha, diffColor, diffColorAlt,
// aaColor, checkerboard). Prints a JSON array of the changed counts, in the jobs' order.
import fs from 'node:fs';
import { PNG } from 'pngjs';
import pixelmatch from 'pixelmatch';

const [jobsPath] = process.argv.slice(2);
if (!jobsPath) {
    console.error('usage: node pixelmatch-jobs.mjs JOBS.json');
    process.exit(2);
}
const counts = JSON.parse(fs.readFileSync(jobsPath, 'utf8')).map(({ a, b, out, options }) => {
    const img1 = PNG.sync.read(fs.readFileSync(a));
    const img2 = PNG.sync.read(fs.readFileSync(b));
    const diff = new PNG({ width: img1.width, height: img1.height });
    const count = pixelmatch(img1.data, img2.data, diff.data, img1.width, img1.height, options);
    fs.writeFileSync(out, PNG.sync.write(diff));
    return count;
});
console.log(JSON.stringify(counts));
