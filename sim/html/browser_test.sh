#!/usr/bin/env bash
# The report pages in a real browser (ctest label `browser`; docs/report.md). Headless Chromium loads
# a page written by `exasim report`, and the test fails unless:
#  - the page's own script ran to its end (#js-status data-ready="1") and recorded no JavaScript error,
#    unhandled rejection or console.error (data-errors="0": the trap in sim/html/internal/assets.cpp);
#    the browser's console log (--enable-logging=stderr) holds no "Uncaught" either;
#  - every expected chart id and text (e.g. the iteration time of summary.json) is in the DOM.
# A screenshot (1400 x 2000, or SHOT_HEIGHT) is written beside the page. Without chromium the test is skipped (exit 77,
# ctest SKIP_RETURN_CODE), never passed.
#
#   browser_test.sh check PAGE.html SHOT.png [--id ID]... [--text TEXT]...
#   browser_test.sh simulate|dragonfly|megatron|sweep|sweep-names|tune|tune-all|place EXASIM ROOT WORKDIR   make the folder, the page, check it
#   browser_test.sh broken EXASIM ROOT WORKDIR    pages with a deliberate error must fail the check
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# CHROMIUM=PATH picks the browser (CHROMIUM=none skips, to see the skip work).
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ] || [ ! -x "$chromium" ]; then
  echo "browser_test: SKIPPED: no chromium${CHROMIUM:+ at CHROMIUM=$CHROMIUM} (scripts/install-deps.sh installs Debian's chromium)"
  exit 77
fi

# check PAGE SHOT [--id ID]... [--text TEXT]...: 0 when the page passes, 1 (saying why) when not.
check() {
  local page=$1 shot=$2
  shift 2
  local profile dom log
  profile=$(mktemp -d "${TMPDIR:-/tmp}/exasim-chromium.XXXXXX")
  dom="$page.dom.html" log="$page.console.log"
  local flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$profile" --no-first-run
               --enable-logging=stderr --v=0 --window-size=1400,"${SHOT_HEIGHT:-2000}")
  timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$(realpath "$page")" >"$dom" 2>"$log"
  local rc=$?
  timeout 120 "$chromium" "${flags[@]}" --screenshot="$shot" "file://$(realpath "$page")" >/dev/null 2>&1
  rm -rf "$profile"
  local bad=0
  [ "$rc" -eq 0 ] || { echo "browser_test: chromium exited $rc on $page"; bad=1; }
  [ -s "$shot" ] || { echo "browser_test: no screenshot $shot"; bad=1; }
  grep -q 'data-ready="1"' "$dom" || { echo "browser_test: $page: the page's script did not run to its end"; bad=1; }
  if ! grep -q 'id="js-status" data-errors="0"' "$dom"; then
    echo "browser_test: $page: JavaScript errors:"
    grep -o 'JavaScript error [0-9]*: [^<]*' "$dom" | head -5
    bad=1
  fi
  if grep -q 'Uncaught' "$log"; then
    echo "browser_test: $page: the console shows:"
    grep 'Uncaught' "$log" | head -5
    bad=1
  fi
  while [ $# -gt 0 ]; do
    case $1 in
      --id) grep -q "id=\"$2\"" "$dom" || { echo "browser_test: $page: no element with id $2"; bad=1; } ;;
      --text) grep -qF -- "$2" "$dom" || { echo "browser_test: $page: text not found: $2"; bad=1; } ;;
      *) echo "browser_test: unknown check $1"; return 2 ;;
    esac
    shift 2
  done
  [ "$bad" -eq 0 ] && echo "browser_test: $page: no JavaScript error, every chart and number found; screenshot $shot"
  return "$bad"
}

# The iteration time of a summary.json as the page prints it (%.4f s).
iteration_time() {
  printf '%.4f s' "$(sed -n 's/^ *"iteration_time_s": \([-0-9.e+]*\),$/\1/p' "$1")"
}

mode=$1
shift
case $mode in
  check) check "$@"; exit $? ;;
esac
exasim=$1 root=$2 work=$3
rm -rf "${work:?}/$mode" && mkdir -p "$work/$mode"
out="$work/$mode"
run() { "$@" >"$out/command.log" 2>&1 || { echo "browser_test: failed: $*"; cat "$out/command.log"; exit 1; }; }
case $mode in
  simulate)
    run "$exasim" simulate "$root/configs/scenarios/default.json" --out "$out/run" --trace-ranks 0-3,8,16 --links 5 -q
    run "$exasim" report "$out/run" --out "$out/report.html"
    check "$out/report.html" "$out/report.png" --id summary --id memory-bar --id breakdown-bar --id kernel-chart \
      --id timeline --id timeline-plot --id hottest-links --id link-classes \
      --text ">$(iteration_time "$out/run/summary.json")<" --text '>rank 16</text>' || exit 1
    # The timeline's script: five clicks on "zoom in" narrow the plot's viewBox to 1100/2^5 = 34.375
    # units about its middle (x0 = 550 - 34.375/2), and hovering a block prints its tooltip line.
    probe='for (var i = 0; i < 5; i++) document.getElementById("zoom-in").click();'
    probe+=' document.body.setAttribute("data-zoomed", document.getElementById("timeline-plot").getAttribute("viewBox"));'
    probe+=' document.querySelector("#timeline-plot rect.ev").dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));'
    probe+=' document.body.setAttribute("data-hover", document.getElementById("timeline-info").textContent);'
    sed "s|</body>|<script>$probe</script></body>|" "$out/report.html" >"$out/zoomed.html"
    check "$out/zoomed.html" "$out/zoomed.png" --text 'data-zoomed="532.8125 26 34.375 ' --text 'data-hover="rank 0 | ' ;;
  dragonfly)
    # Frontier's dragonfly: the group x group matrix of the global links (below 2000 px: a taller shot).
    run "$exasim" simulate "$root/configs/scenarios/frontier-gpt-40b-4096.json" --out "$out/run" --trace-ranks 0-3 \
      --links 5 -q
    run "$exasim" report "$out/run" --out "$out/report.html"
    SHOT_HEIGHT=2800 check "$out/report.html" "$out/report.png" --id timeline --id hottest-links --id group-matrix \
      --text ">$(iteration_time "$out/run/summary.json")<" ;;
  megatron)
    # Megatron TP2 x PP2, 1F1B over 4 micro-batches: the pipeline bubble shows as pp waits.
    run "$exasim" simulate "$root/validate/cases/megatron-tp2-pp2.json" --out "$out/run" -q
    run "$exasim" report "$out/run" --out "$out/report.html"
    check "$out/report.html" "$out/report.png" --id memory-bar --id breakdown-bar --id timeline \
      --text ">$(iteration_time "$out/run/summary.json")<" --text '| wait on pp |' --text '>rank 3</text>' ;;
  sweep)
    run "$exasim" sweep "$root/configs/scenarios/default.json" --vary gpus=64,128,256,512 \
      --vary parallel.gdata=8,16,32,64 --zip --out "$out/run"
    run "$exasim" report "$out/run" --out "$out/report.html"
    check "$out/report.html" "$out/report.png" --id sweep-time --id sweep-tflops --id sweep-efficiency \
      --id sweep-table --id efficiency-note --text '<td>512</td>' ;;
  sweep-names)
    # Two varied fields whose values are names: grouped bars over the first, a series per the second.
    run "$exasim" sweep "$root/configs/scenarios/default.json" --vary collectives.algorithm=nccl,ring \
      --vary overlap.dp=false,true --out "$out/run"
    run "$exasim" report "$out/run" --out "$out/report.html"
    check "$out/report.html" "$out/report.png" --id sweep-time --id sweep-peak --id sweep-mfu \
      --text '>overlap.dp=true</text>' --text 'overlap.dp=false at ring: ' ;;
  tune)
    run "$exasim" tune "$root/configs/scenarios/default.json" --top 3 --out "$out/run"
    run "$exasim" report "$out/run" --out "$out/report.html"
    check "$out/report.html" "$out/report.png" --id tune-ranking --id tune-table --id best-grid --id mfu \
      --text '>simulated iteration time (seconds)</text>' --text 'Ranked by simulated iteration time' \
      --text 'exasim report: custom on 64 x a100-40gb (simple-a100), global batch 512' ;;
  tune-all)
    # --scheme all: tune.csv names each configuration's scheme and has Megatron's columns too.
    run "$exasim" tune "$root/configs/scenarios/default.json" --scheme all --top 4 --set model.layers=2 \
      --set gpus=16 --set training.global_batch=16 --out "$out/run"
    run "$exasim" report "$out/run" --out "$out/report.html"
    check "$out/report.html" "$out/report.png" --id tune-ranking --id tune-table --id best-grid \
      --text '>megatron tp=' --text '>axonn4d gx=' --text 'configurations that fit' ;;
  place)
    # A placement plan: the ranked placements, the baselines marked (default.json: one switch, so the
    # packed baseline is the plan).
    run "$exasim" place "$root/configs/scenarios/default.json" --top 2 --out "$out/run"
    run "$exasim" report "$out/run" --out "$out/report.html"
    check "$out/report.html" "$out/report.png" --id place-ranking --id place-table --id plan --id mfu \
      --id place-hot-links --text '>packed</div>' --text 'spread (baseline)' --text '>plan: ' ;;
  broken)
    # The check must catch each kind of failure: a page whose script throws, one that logs
    # console.error, one whose script has a syntax error (its end-of-script marker never set), one
    # that lacks a chart.
    run "$exasim" simulate "$root/configs/scenarios/default.json" --out "$out/run" --trace-ranks 0-1 -q
    run "$exasim" report "$out/run" --out "$out/good.html"
    check "$out/good.html" "$out/good.png" --id timeline >/dev/null || { echo "browser_test: the good page fails"; exit 1; }
    inject() { sed "s|</main>|</main><script>$2</script>|" "$out/good.html" >"$out/$1.html"; }
    inject throws 'no_such_function();'
    inject console 'console.error("deliberate");'
    sed 's|var svg = document.getElementById|var svg = = document.getElementById|' "$out/good.html" >"$out/syntax.html"
    status=0
    for page in throws console syntax; do
      if check "$out/$page.html" "$out/$page.png" --id timeline; then
        echo "browser_test: the deliberately broken page $page.html passed the check"
        status=1
      else
        echo "browser_test: $page.html fails the check, as it must"
      fi
    done
    if check "$out/good.html" "$out/missing.png" --id no-such-chart; then
      echo "browser_test: a missing chart passed the check"
      status=1
    fi
    exit $status ;;
  *) echo "browser_test: unknown mode $mode"; exit 2 ;;
esac
