// Prints the run's closing lines that any CI log reader understands: `N passed, N failed, N skipped`, the slowest test
// files, the tests skipped because a machine tool is missing (with one command that installs them all), and the
// timeout factor when the machine was loaded (jest.config.js).
const { existsSync, readFileSync } = require('node:fs');
const { relative } = require('node:path');

const SLOWEST = 8;

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const lines = [];
    const files = results.testResults
      .filter((r) => r.perfStats && r.perfStats.end > r.perfStats.start)
      .map((r) => ({ file: relative(this.rootDir, r.testFilePath), ms: r.perfStats.end - r.perfStats.start }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST);
    if (files.length > 1) {
      lines.push(`slowest test files: ${files.map((f) => `${f.file} ${(f.ms / 1000).toFixed(1)} s`).join(', ')}`);
    }
    const skipped = readSkips(process.env.MME_TEST_SKIP_LOG);
    if (skipped.length > 0) {
      const install = [...new Set(skipped.flatMap((s) => s.install))];
      const apt = install.filter((i) => i.startsWith('apt-get install ')).map((i) => i.slice('apt-get install '.length));
      const other = install.filter((i) => !i.startsWith('apt-get install '));
      const command = [apt.length > 0 ? `sudo apt-get install ${[...new Set(apt)].join(' ')}` : '', ...other].filter(Boolean);
      lines.push(
        `${skipped.length} test(s) skipped for what this machine lacks (${[...new Set(skipped.map((s) => s.reason))].join('; ')}); ` +
          `to run them: ${command.join(' && ')}`,
      );
    }
    const scale = Number(process.env.MME_TEST_TIMEOUT_SCALE);
    if (scale > 1) lines.push(`timeouts scaled by ${scale} for this machine's load`);
    const skippedCount = results.numPendingTests + results.numTodoTests;
    lines.push(`${results.numPassedTests} passed, ${results.numFailedTests} failed${skippedCount ? `, ${skippedCount} skipped` : ''}`);
    process.stdout.write(`\n${lines.join('\n')}\n`);
  }
}

function readSkips(file) {
  if (!file || !existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

module.exports = SummaryReporter;
