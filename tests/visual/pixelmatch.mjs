// The reference count for vaider-visual's parity test: npm pixelmatch on two same-size PNGs.
// Usage: node tests/visual/pixelmatch.mjs A.png B.png [--white]
// Prints the number of changed pixels (threshold 0.1); `--white` blends transparent pixels
// onto white (checkerboard: false) instead of pixelmatch 7.2's default checkerboard.
import fs from 'node:fs';
import { PNG } from 'pngjs';
import pixelmatch from 'pixelmatch';

const [a, b, flag] = process.argv.slice(2);
if (!a || !b) {
    console.error('usage: node pixelmatch.mjs A.png B.png [--white]');
    process.exit(2);
}
const img1 = PNG.sync.read(fs.readFileSync(a));
const img2 = PNG.sync.read(fs.readFileSync(b));
if (img1.width !== img2.width || img1.height !== img2.height) {
    console.error(`sizes differ: ${img1.width}x${img1.height} and ${img2.width}x${img2.height}`);
    process.exit(2);
}
const count = pixelmatch(img1.data, img2.data, null, img1.width, img1.height, {
    threshold: 0.1,
    checkerboard: flag !== '--white',
});
console.log(count);
