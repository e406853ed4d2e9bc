// The QA benchmark's Playwright side (crates/vaider-bench/src/bin/qa.rs): the same ten steps
// as the benchmark's test plan, in the same system Chromium and viewport as Vaider's runs.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: '.',
  workers: 1,
  retries: 0,
  timeout: 30_000,
  reporter: 'list',
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox'],
    },
  },
});
