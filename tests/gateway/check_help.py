#!/usr/bin/env python3
"""`rankcast --help`, the man page and --version cover the command line.

  check_help.py SOURCE_DIR RANKCAST_BIN MAN_PAGE VERSION

Every long option of a getopt_long table in gateway/main.c, the export and
import tool (gateway/cli/gw_cli.c) and `rankcast token` (gateway/gw_token_cmd.c)
must appear in --help and in rankcast(1), as must every subcommand main.c
dispatches on; --help and --version exit 0; --version starts with
"rankcast VERSION" (CMake's project version) and names the libraries.
"""
import re
import subprocess
import sys

src, binary, man, version = sys.argv[1:5]
FILES = ['gateway/main.c', 'gateway/cli/gw_cli.c', 'gateway/gw_token_cmd.c']
failures = []


def run(*args):
    res = subprocess.run([binary, *args], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        failures.append(f'rankcast {" ".join(args)} exited {res.returncode}: {res.stderr.strip()}')
    return res.stdout


help_text = run('--help')
man_text = open(man).read().replace('\\-', '-').replace('\\e', '\\')
options = set()
for f in FILES:
    text = open(f'{src}/{f}').read()
    found = re.findall(r'\{"([a-z][a-z-]*)",\s*(?:required|no|optional)_argument', text)
    if not found:
        failures.append(f'{f}: no getopt_long options found (has the table changed form?)')
    options.update(found)
# subcommands: main.c's strcmp(argv[1], "token") and gw_cli_is_command's names
commands = set(re.findall(r'strcmp\(argv\[1\], "([a-z]+)"\)', open(f'{src}/gateway/main.c').read()))
commands |= set(re.findall(r'strcmp\(cmd, "([a-z]+)"\)', open(f'{src}/gateway/cli/gw_cli.c').read()))
if not {'token', 'export', 'import'} <= commands:
    failures.append(f'subcommands found: {sorted(commands)}, expected token, export, import at least')

for opt in sorted(options):
    for name, text in (('--help', help_text), ('rankcast(1)', man_text)):
        if not re.search(rf'--{re.escape(opt)}\b', text):
            failures.append(f'--{opt} is not in {name}')
for cmd in sorted(commands):
    for name, text in (('--help', help_text), ('rankcast(1)', man_text)):
        if not re.search(rf'rankcast {cmd}\b', text):
            failures.append(f'the command "{cmd}" is not in the usage of {name}')

ver = run('--version').splitlines()
if not ver or ver[0] != f'rankcast {version}':
    failures.append(f'--version first line {ver[:1]}, expected "rankcast {version}"')
for lib in ('libwebsockets', 'hiredis', 'libuv'):
    if not any(re.match(rf'{lib} \d+\.\d+', line) for line in ver):
        failures.append(f'--version does not give the {lib} version: {ver}')

print(f'check_help: {len(options)} options ({", ".join(sorted(options))}), commands {sorted(commands)}')
for f in failures:
    print('FAIL:', f)
sys.exit(1 if failures else 0)
