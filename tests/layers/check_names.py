#!/usr/bin/env python3
"""The naming rule of core/ and gateway/, checked on the objects of a build.

  check_names.py SOURCE_DIR BUILD_DIR

Every object of core/ and gateway/ exports only names that start with its
file's name (`fanout/gw_board.c` exports `gw_board_*` or `gw_board`), so a
reader who sees a call knows which file holds it. The exceptions are listed
here with why:
  - a module split over several files may share names private to it, marked
    by a double underscore: `rc_conf__set_bytes` in core/rc_conf_set.c is the
    rc_conf module's, declared in its internal header, called by no one else;
  - files generated into the build (core's rc_lua_scripts.c) are not checked;
  - `main` (gateway/main.c);
  - `recv`, `recvfrom` and `SSL_read`, which serve/gw_wsguard.c,
    serve/gw_rawreq.c and serve/gw_tlsread.c replace for the process on
    purpose (the frame guard and the request-line tap see every byte before
    lws does, decrypted on TLS connections).
It also checks that every .c file of gateway/ and core/ that has a header of
its own name includes it first, so a header that stops compiling alone is
caught where it is defined.
"""
import os
import re
import subprocess
import sys

INTERPOSED = {'main', 'recv', 'recvfrom', 'SSL_read'}


def main():
    src, build = sys.argv[1], sys.argv[2]
    bad = []
    seen = 0
    for d, _, fs in os.walk(build):
        for f in fs:
            if not f.endswith('.c.o') or 'CMakeFiles' not in d:
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, build)
            top = rel.split(os.sep)[0]
            if top not in ('gateway', 'core'):
                continue
            m = re.search(r'CMakeFiles/[^/]+\.dir/(.*)\.c\.o$', rel)
            name = m.group(1)
            if not os.path.exists(os.path.join(src, top, name + '.c')):
                continue  # generated, or left over from a file since moved
            base = os.path.basename(name)
            seen += 1
            out = subprocess.run(['nm', '-g', '--defined-only', path],
                                 capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                p = line.split()
                if len(p) != 3 or p[1] not in 'TDBR':
                    continue
                sym = p[2]
                if sym.startswith('__'):
                    continue  # the compiler's own (ASan's __odr_asan.NAME in a sanitized build)
                if sym in INTERPOSED or sym == base or sym.startswith(base + '_'):
                    continue
                if '__' in sym and base.startswith(sym.split('__')[0] + '_'):
                    continue  # a module's private name (see above)
                bad.append(f'{top}/{name}.c exports {sym} (want {base}_*)')
    for top in ('gateway', 'core'):
        for d, _, fs in os.walk(os.path.join(src, top)):
            for f in fs:
                if not f.endswith('.c'):
                    continue
                header = f[:-2] + '.h'
                if not os.path.exists(os.path.join(d, header)):
                    continue
                with open(os.path.join(d, f), encoding='utf-8') as fh:
                    first = next((l for l in fh if l.startswith('#include')), '')
                want = re.compile(r'#include\s+"([^"]*/)?' + re.escape(header) + '"')
                if not want.match(first):
                    rel = os.path.relpath(os.path.join(d, f), src)
                    bad.append(f'{rel} includes {first.strip() or "nothing"} first (want its own {header})')
    if not seen:
        print(f'check_names: no objects of core/ or gateway/ under {build}')
        return 1
    for b in bad:
        print('check_names:', b)
    print(f'check_names: {seen} objects, {len(bad)} problems')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
