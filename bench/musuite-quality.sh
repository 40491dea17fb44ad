#!/usr/bin/env bash
# The answer quality of the approximate μSuite services on their default data (docs/services.md):
# HDSearch recall@10 of its LSH index against brute force (queries 0..99), Recommend's mean
# absolute error against the true ratings over 4 and 1 leaves and against a constant 3.5-star
# guess (queries 0..999). Computed by the services' references (io.doubleface.services.musuite.Quality),
# which give the answers the services give (the tests check that); no server runs.
#
#   bash bench/musuite-quality.sh [OUT_DIR]     (default docs/results/musuite-quality-<UTC date>)
#
# Writes OUT_DIR/quality.json and OUT_DIR/environment.json; about 10 s on 2 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-$ROOT/docs/results/musuite-quality-$(date -u +%Y%m%dT%H%M%SZ)}"
JAR="$ROOT/cli/target/doubleface.jar"
"$ROOT/doubleface" --version >/dev/null          # builds the jar when it is stale
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
mkdir -p "$OUT"
echo "musuite-quality: computing (HDSearch 100,000 x 128-d brute force for 100 queries; Recommend 1,000 queries) ..." >&2
"$JAVA" -cp "$JAR" io.doubleface.services.musuite.Quality > "$OUT/quality.json"
cat > "$OUT/environment.json" <<JSON
{"command": "bash bench/musuite-quality.sh", "commit": "$(git -C "$ROOT" rev-parse HEAD)",
 "java": "$("$JAVA" -version 2>&1 | head -1 | sed 's/"/\\"/g')", "date": "$(date -u +%FT%TZ)"}
JSON
cat "$OUT/quality.json"
echo "musuite-quality: written to $OUT" >&2
