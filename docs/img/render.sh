#!/usr/bin/env bash
# Renders every Graphviz source in docs/img/src/*.dot to docs/img/<name>.png. The PNGs are committed,
# so readers and CI need no Graphviz; run this after editing a .dot file and commit both.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
if ! command -v dot >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
  else
    echo "render.sh: Graphviz is missing; install it (apt-get install graphviz)" >&2
    exit 1
  fi
fi
for src in src/*.dot; do
  out="$(basename "${src%.dot}").png"
  dot -Tpng -Gdpi=110 -o "$out" "$src"
  echo "render.sh: $src -> docs/img/$out"
done
