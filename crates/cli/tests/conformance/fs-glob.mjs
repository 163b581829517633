// `fs` with a `globSync` for Node < 22 (the conformance suite imports it; it only uses
// patterns like `**/checks.json`). Everything else is Node's own `fs`.
import * as fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs.default ?? fs;

function toRegExp(pattern) {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      re += '(?:.*/)?';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export function globSync(pattern, options = {}) {
  if (typeof fs.globSync === 'function') return fs.globSync(pattern, options);
  const cwd = options.cwd ? String(options.cwd) : process.cwd();
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  const res = patterns.map(toRegExp);
  const out = [];
  const walk = (rel) => {
    let entries;
    try {
      entries = fs.readdirSync(path.join(cwd, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (res.some((r) => r.test(p))) out.push(p);
      if (e.isDirectory()) walk(p);
    }
  };
  walk('');
  return out;
}
