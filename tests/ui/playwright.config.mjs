// Playwright runs the UI tests against the real `vaider serve` (see lib/vaider.mjs) in the
// system Chromium: no browser is downloaded. `bash scripts/ui-test.sh` builds the binaries,
// installs Chromium and runs this inside a D-Bus session with an unlocked gnome-keyring.
import { defineConfig } from '@playwright/test';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--autoplay-policy=no-user-gesture-required',
];

// Chromium does not need the session bus (it belongs to the keyring the server uses): kept
// off it, it starts no desktop portals or accessibility bus that outlive the test run.
export const CHROMIUM_ENV = { ...process.env, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/vaider-no-bus' };

export default defineConfig({
  testDir: '.',
  testMatch: /.*\.spec\.mjs$/,
  // Each file starts its own servers; two cores: one file at a time.
  workers: 1,
  fullyParallel: false,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 20_000 },
  outputDir: 'test-results',
  reporter: [['list'], ['json', { outputFile: 'test-results/report.json' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: CHROMIUM, args: CHROMIUM_ARGS, env: CHROMIUM_ENV },
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    actionTimeout: 15_000,
  },
});
