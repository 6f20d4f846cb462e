#!/usr/bin/env bash
# Prints the skip log the tests wrote (scripts/test.sh, .ci/run): how many skipped, each with
# its reason and need, and which needs CACHESCOPE_TEST_REQUIRE makes failures.
set -euo pipefail
log="${1:?usage: test-skips.sh SKIP_LOG}"
n=$(grep -c '^SKIPPED ' "$log" 2>/dev/null || true)
echo
if [ "${n:-0}" -eq 0 ]; then
  echo "==> no test skipped (required: ${CACHESCOPE_TEST_REQUIRE:-nothing})"
  exit 0
fi
echo "==> $n test(s) skipped, each for a need the machine lacks (required, so never skipped: ${CACHESCOPE_TEST_REQUIRE:-nothing}):"
sort "$log" | sed 's/^/    /'
echo "    by need: $(sed -n 's/.*\[\([^]]*\)\]$/\1/p' "$log" | sort | uniq -c | awk '{printf "%s%s x%s", s, $2, $1; s=", "}')"
