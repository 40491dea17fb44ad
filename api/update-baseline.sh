#!/usr/bin/env bash
# Rebuilds the API compatibility baseline (docs/versioning.md): the jars of the modules with public
# API, built from the working tree, copied to api/baseline/<artifactId>.jar. Run it only for an
# intended API change (with its CHANGELOG entry) or right after a release. The build is
# reproducible, so the same commit always gives the same baseline bytes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

modules=(framework drivers/kv drivers/grpc drivers/redis drivers/mongo)
./mvnw -B -q package -DskipTests -Djapicmp.skip=true -Dmaven.javadoc.skip=true -Dmaven.source.skip=true \
  -pl "$(IFS=,; echo "${modules[*]}")" -am
for m in "${modules[@]}"; do
  jar=$(ls "$m"/target/doubleface-*.jar | grep -Ev -- '-(tests|sources|javadoc)\.jar$')
  [[ $(wc -l <<<"$jar") == 1 ]] || { echo "update-baseline: expected one jar in $m/target, found: $jar" >&2; exit 1; }
  artifact=$(sed -n 's:^  <artifactId>\(doubleface-[a-z-]*\)</artifactId>$:\1:p' "$m/pom.xml" | head -1)
  cp "$jar" "api/baseline/$artifact.jar"
  echo "api/baseline/$artifact.jar <- $jar ($(sha256sum "$jar" | cut -c1-12))"
done
