#!/usr/bin/env bash
# Fails when an object file built for a higher instruction set (src/kernels/x86/) defines a
# weak (COMDAT) symbol. The linker keeps one copy of each weak symbol for the whole
# program: if it kept the AVX-512 copy of an inline function that baseline code also calls,
# nnhal would crash on a CPU without AVX-512. Such helpers belong in an unnamed namespace
# (kernels/x86/simd_avx512.h). Usage: scripts/check_isa_objects.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
objects=$(find "$build" -path '*src/kernels/x86/*.o' 2>/dev/null || true)
if [ -z "$objects" ]; then
  echo "check_isa_objects: no x86 kernel objects under $build (not an x86 build?)"; exit 0
fi
status=0
for o in $objects; do
  weak=$(nm -C --defined-only "$o" | awk '$2 ~ /^[WVu]$/ && $3 !~ /^DW\.ref\./' || true)
  if [ -n "$weak" ]; then
    echo "check_isa_objects: $o defines weak symbols another file could take:"; echo "$weak"
    status=1
  fi
done
[ $status -eq 0 ] && echo "check_isa_objects: $(echo "$objects" | wc -l) x86 kernel objects, no weak symbols"
exit $status
