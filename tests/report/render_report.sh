#!/usr/bin/env bash
# The capacity report in a real browser: `burst report` writes the HTML of three plans (a flat
# ring, a double ring, Ulysses x ring; the last also with a run's JSON beside it), headless
# Chromium renders each to a PNG, and the test checks that Chromium exited 0 and that every PNG
# is a real 1400 x 2000 picture of some weight (a blank page is a few kB). Then the labels as
# the browser lays them out: a copy of each report with a script that measures every SVG text's
# box (getBoundingClientRect, the font Chromium really uses) against its picture's, printed
# through --dump-dom; a text that sticks out of its picture fails the test. A sixth report is of a
# training run planned and run by this script, and every row of its "measured against
# predicted" must hold both figures.
#
# Usage: render_report.sh BURST_BINARY SOURCE_DIR [OUT_DIR]
# Without Chromium (Debian's `chromium`) it prints a SKIPPED line and exits 77, which CTest
# counts as skipped; with BURST_INSTALL_CHROMIUM=1 (and root with apt-get) it installs it first.
# OUT_DIR (default: a temporary directory) keeps the reports and the PNGs for a person to look at.
set -euo pipefail

burst=$1
src=$2
out=${3:-$(mktemp -d)}
mkdir -p "$out"

find_chromium() { command -v chromium || command -v chromium-browser || true; }
browser=$(find_chromium)
if [[ -z "$browser" && "${BURST_INSTALL_CHROMIUM:-0}" == 1 && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
  echo "installing chromium (BURST_INSTALL_CHROMIUM=1) ..."
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || true
  browser=$(find_chromium)
fi
if [[ -z "$browser" ]]; then
  echo "SKIPPED (chromium not installed; apt-get install chromium, or set BURST_INSTALL_CHROMIUM=1)"
  exit 77
fi

# A training run planned and run now (2 nodes of 2 CPU ranks, tiny-train at 256 tokens, 3 steps):
# its report must fill every row of "measured against predicted".
live_plan="$out/live-plan.json" live_run="$out/live-run.json"
failed=0
if ! "$burst" plan --topology local --local-device cpu --nodes 2 --per-node 2 \
    --model "$src/tests/data/models/tiny-train.json" --seq 256 -o "$live_plan" >"$out/live-plan.log" 2>&1 ||
  ! timeout 300 mpirun --oversubscribe --allow-run-as-root -np 4 "$burst" run "$live_plan" --steps 3 --json \
    --device cpu >"$live_run" 2>"$out/live-run.log"; then
  echo "FAIL measured-live: planning or running the live training failed ($out/live-plan.log, $out/live-run.log)"
  failed=1
fi

# name plan [run]
reports=(
  "flat-ring $src/tests/data/plans/a800x4-burst14b-1M.json"
  "double-ring $src/tests/data/plans/h100x2-llama3-8b-512K-doc.json"
  "ulysses-ring $src/tests/data/run/h100x4-llama3-8b-256K-burst-usp.json"
  "measured-training $src/tests/data/run/local-2x2-tiny-train-256.json $src/tests/report/data/local-2x2-tiny-train-256.run.json"
  "measured-attention $src/tests/data/run/local-2x2-tiny-mha-4K-burst.json $src/tests/report/data/local-2x2-tiny-mha-4K-burst.run.json"
  "measured-live $live_plan $live_run"
)
for entry in "${reports[@]}"; do
  read -r name plan run <<<"$entry"
  html="$out/$name.html"
  png="$out/$name.png"
  "$burst" report "$plan" ${run:+--run "$run"} --no-scaling -o "$html" 2>"$out/$name.report.log"
  if [[ $name == measured-live ]]; then
    table=$(sed -n "/id=.run-time./,/<\/table>/p;/id=.run-memory./,/<\/table>/p" "$html")
    if [[ -z "$table" ]] || grep -q "not measured\|not predicted" <<<"$table"; then
      echo "FAIL $name: a row of measured against predicted is empty ($html)"
      failed=1
    else
      echo "ok $name: every row of measured against predicted filled"
    fi
  fi
  rm -f "$png"
  if ! timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --screenshot="$png" \
      --window-size=1400,2000 "file://$html" >"$out/$name.chromium.log" 2>&1; then
    echo "FAIL $name: chromium exited non-zero ($out/$name.chromium.log)"
    failed=1
    continue
  fi
  if [[ ! -s "$png" ]]; then
    echo "FAIL $name: no PNG written"
    failed=1
    continue
  fi
  # PNG signature, then IHDR width and height (big-endian at bytes 16..23).
  header=$(od -An -tx1 -N24 "$png" | tr -d ' \n')
  size=$(stat -c %s "$png")
  if [[ ${header:0:16} != 89504e470d0a1a0a ]]; then
    echo "FAIL $name: $png is not a PNG"
    failed=1
  elif (( 16#${header:32:8} != 1400 || 16#${header:40:8} != 2000 )); then
    echo "FAIL $name: $png is $((16#${header:32:8})) x $((16#${header:40:8})), not 1400 x 2000"
    failed=1
  elif (( size < 60000 )); then
    echo "FAIL $name: $png is $size bytes: a blank or broken page"
    failed=1
  else
    echo "ok $name: $png ($size bytes)"
  fi
  fit="$out/$name.fit.html"
  sed 's#</body>#<script>\
window.addEventListener("load", () => {\
  const outside = [];\
  let n = 0;\
  for (const svg of document.querySelectorAll("svg")) {\
    const b = svg.getBoundingClientRect();\
    for (const t of svg.querySelectorAll("text")) {\
      const r = t.getBoundingClientRect();\
      if (r.width === 0) continue;\
      ++n;\
      if (r.left < b.left - 1 \|\| r.right > b.right + 1) outside.push(t.textContent + " [" + r.left.toFixed(1) + ", " + r.right.toFixed(1) + "] outside [" + b.left.toFixed(1) + ", " + b.right.toFixed(1) + "]");\
    }\
  }\
  const pre = document.createElement("pre");\
  pre.textContent = "LABELS MEASURED " + n + " OUTSIDE " + outside.length + " " + outside.join(" / ");\
  document.body.appendChild(pre);\
});\
</script></body>#' "$html" >"$fit"
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$fit" >"$out/$name.fit.dom" \
    2>"$out/$name.fit.log" || true
  verdict=$(grep -o 'LABELS MEASURED [0-9]* OUTSIDE [0-9]*[^<]*' "$out/$name.fit.dom" | head -1)
  if [[ -z "$verdict" ]]; then
    echo "FAIL $name: the label measurement printed nothing ($out/$name.fit.log)"
    failed=1
  elif [[ "$verdict" != *" OUTSIDE 0 "* ]]; then
    echo "FAIL $name: labels outside their picture: $verdict"
    failed=1
  else
    echo "ok $name: ${verdict%% OUTSIDE*}, none outside its picture"
  fi
done
exit $failed
