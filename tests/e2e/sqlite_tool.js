/* sqlite_tool.js - the archive file read back with the sqlite3 command-line
 * tool, for the tests of the archive (archive, archive_backlog,
 * sharded_periods). The gateways keep the file open in WAL mode: readers do
 * not wait for them. */
'use strict';

const { execFileSync } = require('node:child_process');

/* null when sqlite3 runs, else why a test cannot (for h.toolMissing). */
function sqliteMissing() {
  try {
    execFileSync('sqlite3', ['-version'], { stdio: 'ignore' });
    return null;
  } catch (e) {
    return 'the sqlite3 command-line tool is not installed (.ci/install-deps installs it)';
  }
}

/* Rows of a query on the archive file, as objects. */
function sql(file, query) {
  const out = execFileSync('sqlite3', ['-cmd', '.timeout 5000', '-json', file, query], { encoding: 'utf8' });
  return out.trim() ? JSON.parse(out) : [];
}

/* An archived period's rows, best first. */
const ROWS_SQL = (board, period) => `SELECT rank, member, CAST(composite AS INTEGER) AS c FROM archived_rows
  WHERE board = '${board}' AND period = '${period}' ORDER BY rank`;

module.exports = { sqliteMissing, sql, ROWS_SQL };
