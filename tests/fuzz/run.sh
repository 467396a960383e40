#!/usr/bin/env bash
# Fuzzes the message decoders, the config parser and the import row parsers with libFuzzer (clang,
# AddressSanitizer, UndefinedBehaviorSanitizer).
#   bash tests/fuzz/run.sh           each target for 20 s (what CI runs)
#   bash tests/fuzz/run.sh 3600      each target for an hour (a longer run)
# Seeds are in tests/fuzz/corpus/<target>/; new inputs found go to a scratch
# corpus under build-fuzz/ (copy interesting ones into the seed folder). A
# crash leaves its input in build-fuzz/ and fails the run.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-20}"
out="$root/build-fuzz"
mkdir -p "$out"
cflags=(-std=c11 -g -O1 -D_POSIX_C_SOURCE=200809L -fsanitize=fuzzer,address,undefined
        -fno-sanitize-recover=undefined -I"$root/core")
# all of core/ (pure C, no I/O), as rc_core links it: a list kept by hand
# here went stale once (a new file the config parser calls) and broke CI
srcs=("$root"/core/*.c)

status=0
for target in request conf import; do
  clang "${cflags[@]}" "$root/tests/fuzz/fuzz_$target.c" "${srcs[@]}" -lcjson -lcrypto -lz -lm -o "$out/fuzz_$target"
  mkdir -p "$out/corpus-$target"
  echo "fuzz: $target for ${secs}s"
  if ! (cd "$out" && ./"fuzz_$target" -max_total_time="$secs" -max_len=8192 -timeout=10 \
          -print_final_stats=1 "corpus-$target" "$root/tests/fuzz/corpus/$target" 2>&1 | tail -n 12); then
    status=1
  fi
done
if [ "$status" = 0 ]; then echo "fuzz: 3 passed, 0 failed"; else echo "fuzz: a target crashed (input saved in $out)"; fi
exit "$status"
