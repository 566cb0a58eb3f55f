#!/usr/bin/env bash
# Lints and renders the transferops Helm chart without a helm binary: Maven runs
# Helm's own lint and template through helm-java (deploy/helm/check).
#
#   deploy/helm/check.sh                       # the chart with its values.yaml
#   deploy/helm/check.sh --values my.yaml      # extra HelmCheck options:
#   deploy/helm/check.sh --set services.fleet.replicas=3 --output /tmp/rendered.yaml
#   deploy/helm/check.sh --strict              # fail on lint warnings too
#
# Needs: Java 17+ and Maven 3.8+; the first run downloads helm-java (~30 MB with
# its native Helm library) and the Maven plugins from Maven Central.
# Renders with values.yaml, with deploy/helm/values-production.yaml on top, with
# deploy/helm/check/pgbouncer.yaml (PgBouncer) on top; then
# with deploy/helm/check/over-budget.yaml on top, which the chart must refuse (the connection
# budget, values `database`). Without options, the pools rendered must be the ones
# test/support/chart-values.ts derives (the replica run's; needs node_modules).
# Exits non-zero when lint reports an error, rendering fails, or a rendered
# manifest is malformed, duplicated or a Secret, does not validate against the
# Kubernetes v1.33 API (fabric8 kubernetes-model: unknown kinds and fields, wrong
# types), or breaks the project's rules (probes, requests/limits, non-root,
# read-only root, no privilege escalation, capabilities dropped).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

chart="deploy/helm/transferops"
# exec.args is split on spaces: options and paths must not contain any.
args="$chart --scenario deploy/helm/values-production.yaml --scenario deploy/helm/check/pgbouncer.yaml --refused deploy/helm/check/over-budget.yaml"
# With no options of its own: the default render is kept, to compare its pools with the ones
# the replica run derives from the same values (test/support/chart-values.ts).
rendered=""
if [[ $# -eq 0 ]]; then
  rendered="$(mktemp -t helm-check-XXXXXX.yaml)"
  trap 'rm -f "$rendered"' EXIT
  args="$args --output $rendered"
fi
args="$args${*:+ $*}"

start=$(date +%s)
# Debian's Maven 3.8 prints stray ANSI resets even in batch mode: strip them
# (pipefail keeps Maven's exit status).
if mvn -q -B -ntp -Dstyle.color=never \
  -f deploy/helm/check/pom.xml \
  compile exec:java "-Dexec.args=$args" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g' &&
  { [[ -z $rendered ]] || node --import tsx test/deploy/rendered-pools.ts "$rendered"; }; then
  echo "helm check: PASS ($(( $(date +%s) - start ))s)"
else
  rc=$?
  echo "helm check: FAIL ($(( $(date +%s) - start ))s)" >&2
  exit "$rc"
fi
