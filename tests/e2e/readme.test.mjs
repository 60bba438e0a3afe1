// The README, typed as written. Every ```sh block whose lines start with `$ `
// runs in a fresh folder that holds only what a clone has for it: `build/baton`
// (the binary under test), `examples/`, and `baton` and Claude Code's real
// `claude` on PATH. Blocks run in order, each in its own bash as a reader
// pastes it (variables do not carry over; the store in .baton/ does). A
// command must exit 0, unless the README shows `baton: Kind: …` under it, in
// which case it must fail with that kind. A block after
// `<!-- readme-test: serve -->` runs with `baton serve` started beside it (as
// its text asks the reader to); `<!-- readme-test: skip … -->` names why a
// block cannot run here, and such blocks are counted so none hides.

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

import { BATON } from './helpers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const claudeBin = path.join(here, 'node_modules/.bin');

// What some commands must print beyond exiting 0: the README says so in words.
const MUST_PRINT = [
  { command: /^claude mcp list/, stdout: /✔ Connected/, not: /Failed|✗/ },
  { command: /graph run .* --id issue-42 --state-dir/, stdout: /completed/ },
  { command: /^curl -s -X POST .*run\.create/, stdout: /"id":\s*"run-/ },
  { command: /^curl -s localhost:8321\/v1\/ops/, stdout: /"operations"/ },
  { command: /^build\/baton verify/, stdout: /ledger OK/ },
  { command: /^\w+=\$\(/, variable: true },
];

// The README's ```sh blocks: {line, directive, commands: [{line, text, error}]}.
export function parseReadme(text) {
  const lines = text.split('\n');
  const blocks = [];
  let directive = '';
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i].match(/^<!-- readme-test: (.*) -->$/);
    if (m) {
      directive = m[1];
      continue;
    }
    if (lines[i] !== '```sh') {
      if (lines[i].trim() !== '') directive = '';
      continue;
    }
    const block = { line: i + 1, directive, commands: [], plain: [] };
    directive = '';
    for (i++; i < lines.length && lines[i] !== '```'; i++) {
      const line = lines[i];
      if (line.startsWith('$ ')) {
        const command = { line: i + 1, text: line.slice(2), error: '' };
        while (command.text.endsWith('\\') && i + 1 < lines.length) command.text += '\n' + lines[++i];
        block.commands.push(command);
      } else if (block.commands.length === 0) {
        if (line.trim() !== '' && !line.startsWith('#')) block.plain.push(line);
      } else {
        const last = block.commands[block.commands.length - 1];
        const e = line.match(/^baton: (\w+): /);
        if (e && !last.output) last.error = e[1];
        if (line.trim() !== '') last.output = true;
      }
    }
    blocks.push(block);
  }
  return blocks;
}

// One block as a bash script: each command's status, stdout and stderr land
// in files named by its index; "serve" starts baton serve first.
function script(block, dir, withServer) {
  const out = ['set -o pipefail', `exec 3>>"${dir}/status"`];
  if (withServer) {
    out.push(
      `baton serve >"${dir}/serve.log" 2>&1 & serve_pid=$!`,
      `trap 'kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null' EXIT`,
      `for i in $(seq 200); do grep -q 'listening on' "${dir}/serve.log" && break; sleep 0.05; done`,
    );
  }
  block.commands.forEach((c, k) => {
    if (/^(build\/)?baton serve( |$)/.test(c.text)) {
      // It runs until stopped: it works once it listens; the block's end stops it.
      out.push(
        `( exec ${c.text}\n) >"${dir}/out.${k}" 2>"${dir}/err.${k}" & serve_pid=$!`,
        `trap 'kill $serve_pid 2>/dev/null; wait $serve_pid 2>/dev/null' EXIT`,
        `for i in $(seq 200); do grep -q 'listening on' "${dir}/out.${k}" && break; sleep 0.05; done`,
        `grep -q 'listening on' "${dir}/out.${k}"; echo "${k} $?" >&3`,
      );
      return;
    }
    out.push(`{ ${c.text}\n} >"${dir}/out.${k}" 2>"${dir}/err.${k}"`);
    // A captured id must not be empty: the next command would get no argument.
    const variable = c.text.match(/^(\w+)=\$\(/);
    out.push(variable ? `rc=$?; [ $rc -eq 0 ] && [ -z "$${variable[1]}" ] && rc=97; echo "${k} $rc" >&3`
                      : `echo "${k} $?" >&3`);
  });
  return out.join('\n') + '\n';
}

test('the README, typed literally in a fresh folder, works', { timeout: 600_000 }, (t) => {
  const readme = readFileSync(path.join(repo, 'README.md'), 'utf8');
  // Shell blocks are fenced ```sh exactly, so none is passed over unread.
  for (const [i, line] of readme.split('\n').entries()) {
    if (/^\s*```\s*(sh|bash|shell|console|zsh)\b/.test(line)) {
      assert.equal(line, '```sh', `README line ${i + 1}: shell blocks are fenced \`\`\`sh`);
    }
  }
  const blocks = parseReadme(readme);
  const root = mkdtempSync(path.join(tmpdir(), 'baton-readme-'));
  try {
    const project = path.join(root, 'project');
    const bin = path.join(root, 'bin');
    const home = path.join(root, 'home');
    for (const d of [project, bin, home, path.join(project, 'build')]) mkdirSync(d, { recursive: true });
    symlinkSync(BATON, path.join(project, 'build/baton'));
    symlinkSync(BATON, path.join(bin, 'baton'));
    cpSync(path.join(repo, 'examples'), path.join(project, 'examples'), { recursive: true });
    assert.ok(existsSync(path.join(claudeBin, 'claude')), 'tests/e2e has Claude Code (npm ci)');

    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith('BATON_')) delete env[k];
    Object.assign(env, {
      HOME: home,
      PATH: `${bin}:${claudeBin}:${process.env.PATH}`,
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    });

    let ran = 0;
    const skipped = [];
    for (const [b, block] of blocks.entries()) {
      if (block.commands.length === 0) {
        // Set-up blocks (./scripts/…): CI runs test.sh itself; each named script exists.
        for (const line of block.plain) {
          const file = line.split(/\s+/)[0];
          if (file.startsWith('./')) assert.ok(existsSync(path.join(repo, file)), `README line ${block.line}: ${file} exists`);
        }
        continue;
      }
      if (block.directive.startsWith('skip')) {
        skipped.push(`line ${block.line}: ${block.directive}`);
        continue;
      }
      const dir = path.join(root, `block-${b}`);
      mkdirSync(dir);
      writeFileSync(path.join(dir, 'status'), '');
      const withServer = block.directive === 'serve';
      const run = spawnSync('bash', ['-c', script(block, dir, withServer)], {
        cwd: project, env, encoding: 'utf8', timeout: 240_000,
      });
      assert.equal(run.error, undefined, `README block at line ${block.line}: ${run.error}`);
      if (withServer) {
        assert.match(readFileSync(path.join(dir, 'serve.log'), 'utf8'), /listening on/,
          `README block at line ${block.line}: baton serve did not start beside it`);
      }
      const status = new Map(
        readFileSync(path.join(dir, 'status'), 'utf8').trim().split('\n').filter(Boolean)
          .map((l) => l.split(' ').map(Number)),
      );
      block.commands.forEach((c, k) => {
        const stdout = readFileSync(path.join(dir, `out.${k}`), 'utf8');
        const stderr = readFileSync(path.join(dir, `err.${k}`), 'utf8');
        const where = `README line ${c.line}: \`${c.text}\`\nstdout: ${stdout.slice(-1500)}\nstderr: ${stderr.slice(-1500)}` +
          (withServer ? `\nserve: ${readFileSync(path.join(dir, 'serve.log'), 'utf8').slice(-800)}` : '');
        assert.ok(status.has(k), `not reached: ${where}`);
        assert.notEqual(status.get(k), 97, `the captured variable is empty: ${where}`);
        if (c.error) {
          assert.notEqual(status.get(k), 0, `expected to fail with ${c.error}: ${where}`);
          assert.match(stderr, new RegExp(`^baton: ${c.error}: `, 'm'), where);
        } else {
          assert.equal(status.get(k), 0, `exit ${status.get(k)}: ${where}`);
        }
        for (const rule of MUST_PRINT) {
          if (!rule.command.test(c.text)) continue;
          if (rule.stdout) assert.match(stdout, rule.stdout, where);
          if (rule.not) assert.doesNotMatch(stdout, rule.not, where);
          if (rule.variable) {
            assert.equal(stderr, '', `a captured id, and nothing on stderr: ${where}`);
            assert.equal(stdout, '', where);
          }
        }
        ran++;
      });
    }
    t.diagnostic(`${ran} README commands ran; blocks skipped: ${skipped.length}`);
    // Nearly everything runs; what cannot is said in the README's source.
    assert.ok(ran >= 40, `ran ${ran} README commands`);
    assert.ok(skipped.length <= 1, `skipped blocks: ${skipped.join('; ')}`);
    // No literal ids left for a reader to type.
    for (const block of blocks) {
      for (const c of block.commands) {
        assert.doesNotMatch(c.text, /\b(run|task|tok)-[0-9a-f]{12}\b|\b[0-9a-f]{16}\b/, `README line ${c.line} types an id`);
        assert.doesNotMatch(c.text, /\b(RUN|TASK-[A-Z]+)\b|…/, `README line ${c.line} has a placeholder`);
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
