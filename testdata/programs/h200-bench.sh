#!/bin/bash
# h200-bench.sh EXPORT: time nsyscheck's audit against nsys analyze's
# cuda_memcpy_async rule on one capture, 3 runs each, and print a table of
# wall time and peak resident memory per run and the median of each.
#
#   testdata/programs/h200-bench.sh /data/many-copies-600k.sqlite
#
# EXPORT is a .sqlite export or a .nsys-rep; a .nsys-rep is exported once
# into the temporary folder first (nsys export, not timed), so that both
# tools read the same export and neither exports in a timed run. The binary is bin/nsyscheck of the
# checkout (make build), or NSYSCHECK=PATH; nsys must be on PATH. Four
# commands are timed:
#   audit        nsyscheck audit EXPORT --format json   (NVIDIA's rule
#                answered from the audit's own records, as a user gets it)
#   audit-nsys   nsyscheck audit EXPORT --format json --nvidia-rule nsys
#                (the rule run beside the audit through nsys analyze)
#   audit-norule nsyscheck audit EXPORT --format json --nvidia-rule off
#   analyze      nsys analyze -r cuda_memcpy_async:rows=-1 --format csv
# Peak memory is /usr/bin/time -v's maximum resident set size, else that of
# python3's os.wait4 (the same getrusage figure); both count the largest
# process of the command's tree. Then, unless RANKS=0, the audit of a job of
# RANKS ranks (default 64: copies of RANKS_CAPTURE, by default the shipped
# many-copies-small export)
# on 1, 2, 4, ... workers up to the machine's cores (audit --ranks -j N),
# for its speed-up over one worker: once with every core free to the
# workers, once with N workers bound to N cores (taskset). The outputs go to a temporary folder,
# removed at the end; the capture is only read.
set -u

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
    echo "usage: $0 EXPORT (.sqlite or .nsys-rep)" >&2
    exit 2
fi
export_path=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
nsyscheck=${NSYSCHECK:-$root/bin/nsyscheck}
if [ ! -x "$nsyscheck" ]; then
    echo "$nsyscheck is not there: run make build in $root, or set NSYSCHECK" >&2
    exit 2
fi
if ! command -v nsys >/dev/null; then
    echo "nsys is not on PATH: the rule's timing needs it" >&2
    exit 2
fi
RUNS=${RUNS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 2
case "$export_path" in
*.nsys-rep)
    echo "exporting $export_path (not timed)"
    nsys export --type sqlite -o "$work/capture.sqlite" "$export_path" >export.txt 2>&1 ||
        { cat export.txt >&2; echo "nsys export failed" >&2; exit 2; }
    export_path=$work/capture.sqlite
    ;;
esac

# measure NAME RUN CMD...: run CMD, append "NAME RUN rc wall_s rss_kb cpu_s"
# to results.txt (cpu_s: user and system time of CMD and its children).
measure() {
    local name=$1 run=$2
    shift 2
    if [ -x /usr/bin/time ] && /usr/bin/time -v true >/dev/null 2>&1; then
        /usr/bin/time -v -o time.txt "$@" >out.txt 2>err.txt
        local rc=$?
        local wall rss
        wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' time.txt |
            awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }')
        rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
        cpu=$(awk -F': ' '/User time \(seconds\)|System time \(seconds\)/ { s += $2 } END { printf "%.2f", s }' time.txt)
        echo "$name $run $rc $wall $rss $cpu" >>results.txt
    else
        python3 - "$name" "$run" "$@" >>results.txt <<'EOF'
import os, subprocess, sys, time
name, run, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.perf_counter()
with open("out.txt", "wb") as out, open("err.txt", "wb") as err:
    p = subprocess.Popen(cmd, stdout=out, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
print(name, run, os.waitstatus_to_exitcode(status), f"{wall:.2f}", ru.ru_maxrss, f"{ru.ru_utime + ru.ru_stime:.2f}")
EOF
    fi
    tail -n 1 results.txt | awk '{ printf "  %-13s run %s: rc %s, %s s, %.0f MiB, %s s of CPU\n", $1, $2, $3, $4, $5 / 1024, $6 }'
}

echo "capture: $export_path"
echo "nsyscheck: $("$nsyscheck" --version 2>/dev/null | head -n 1)"
echo "nsys: $(nsys --version 2>/dev/null | head -n 1)"
echo "cores: $(nproc) ($(lscpu 2>/dev/null | sed -n 's/^Thread(s) per core: *//p' | head -n 1) thread(s) per core)"
for run in $(seq "$RUNS"); do
    measure audit "$run" "$nsyscheck" audit "$export_path" --format json
    measure audit-nsys "$run" "$nsyscheck" audit "$export_path" --format json --nvidia-rule nsys
    measure audit-norule "$run" "$nsyscheck" audit "$export_path" --format json --nvidia-rule off
    rm -f rule_*.csv
    measure analyze "$run" nsys analyze -r cuda_memcpy_async:rows=-1 --format csv -o rule "$export_path"
done

# nsyscheck audit exits 1 when the copies break the rule: that is an answer,
# not a failure. Only exit statuses above 1 are failures.
echo
python3 - <<'EOF'
import statistics
rows = [l.split() for l in open("results.txt")]
print(f"{'command':<13} {'runs':>4} {'wall s (median)':>16} {'wall s (each)':>22} {'peak MiB (median)':>18} {'failed':>6}")
med = {}
for name in ["audit", "audit-nsys", "audit-norule", "analyze"]:
    rs = [r for r in rows if r[0] == name]
    if not rs:
        continue
    walls = [float(r[3]) for r in rs]
    rss = [int(r[4]) / 1024 for r in rs]
    bad = sum(1 for r in rs if int(r[2]) > (1 if name != "analyze" else 0))
    med[name] = statistics.median(walls)
    print(f"{name:<13} {len(rs):>4} {med[name]:>16.2f} {' '.join(f'{w:.2f}' for w in walls):>22} {statistics.median(rss):>18.0f} {bad:>6}")
if "analyze" in med and med["analyze"] > 0:
    for name in ["audit", "audit-nsys", "audit-norule"]:
        if name in med:
            print(f"{name} / analyze: {med[name] / med['analyze']:.2f}x")
EOF

# The ranks of a job on more and more workers.
ranks=${RANKS:-64}
small=${RANKS_CAPTURE:-$root/testdata/captures/many-copies-small/many-copies-small.sqlite}
if [ "$ranks" -gt 0 ] && [ -f "$small" ]; then
    mkdir -p job
    # Each copy its own session start, 1 ms apart, as each rank's nsys
    # session has: audit --ranks refuses one capture given as two ranks.
    for r in $(seq 0 $((ranks - 1))); do
        cp "$small" "job/report.$r.sqlite" &&
            python3 -c 'import sqlite3, sys
d = sqlite3.connect(sys.argv[1])
d.execute("UPDATE TARGET_INFO_SESSION_START_TIME SET utcEpochNs = utcEpochNs + ?", (int(sys.argv[2]) * 1000000,))
d.commit()' "job/report.$r.sqlite" "$r"
    done
    echo
    echo "audit --ranks of $ranks ranks (copies of $(basename "$small")), by workers:"
    : >results.txt
    # Two ways: N workers free to use every core ("ranks"), and N workers
    # on N cores only (taskset -c 0-(N-1); Go sizes itself to the cores it
    # is given), which is what "N cores" means: its N = 1 is the serial time.
    cores=$(nproc)
    bind=
    command -v taskset >/dev/null && bind=1
    for run in $(seq "$RUNS"); do
        j=1
        while [ "$j" -le "$cores" ]; do
            measure "ranks-j$j" "$run" "$nsyscheck" audit --ranks job -j "$j" --nvidia-rule off
            if [ -n "$bind" ]; then
                measure "cores-j$j" "$run" taskset -c "0-$((j - 1))" "$nsyscheck" audit --ranks job -j "$j" --nvidia-rule off
            fi
            j=$((j * 2))
        done
    done
    python3 - <<'EOF'
import statistics
rows = [l.split() for l in open("results.txt")]
for kind, title in [("ranks", "N workers, every core free to them"), ("cores", "N workers on N cores (taskset)")]:
    names = sorted({r[0] for r in rows if r[0].startswith(kind + "-")}, key=lambda n: int(n.split("j")[1]))
    if not names:
        continue
    print(title + ":")
    one = None
    print(f"{'N':>7} {'wall s (median)':>16} {'speed-up':>9} {'CPU s (median)':>15} {'peak MiB':>9} {'failed':>6}")
    for n in names:
        rs = [r for r in rows if r[0] == n]
        w = statistics.median(float(r[3]) for r in rs)
        one = one or w
        bad = sum(1 for r in rs if int(r[2]) > 1)
        cpu = statistics.median(float(r[5]) for r in rs)
        print(f"{n.split('j')[1]:>7} {w:>16.2f} {one / w:>8.2f}x {cpu:>15.2f} {statistics.median(int(r[4]) / 1024 for r in rs):>9.0f} {bad:>6}")
EOF
fi
