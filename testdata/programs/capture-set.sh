#!/usr/bin/env bash
# capture-set.sh: build the capture programs of this folder and profile them
# on the GPU machine with nsys (2025.3, through the wrapper that
# .device/nsys-env.sh puts on PATH: minimal environment, own PID namespace),
# each from a neutral folder /tmp/cap/NAME. Phases, one or more, in order:
#   build  only build the programs into /tmp/cap/src
#   smoke  build everything, run each program once without nsys at small
#          sizes, and try the trace flags the captures need
#   c      the CUDA captures: pipeline and driver pairs, mixed-buffers,
#          graph-whole/graph-node, managed, many-copies-small
#   py     the Python captures: cupy and torch-prefetch pairs, jax
#   bt     captures with call stacks: the torch-prefetch and pipeline
#          programs from pageable memory, profiled with CPU sampling and
#          --cudabacktrace (and --python-backtrace=cuda for PyTorch), so the audit can name
#          the source line behind each offending copy
#   predict  the pairs that test the way to pin: a DataLoader of 128-image
#          batches with four workers, pageable and pin_memory=True, and the
#          prefetch program pinning each batch again every step (--pin-each;
#          its capture before is torch-prefetch-pageable)
#   predict48  the ways to pin tried on batches of another size: the
#          prefetch program with 48 MiB batches (--rows 12288), pageable,
#          pinned once and pinned again every step
#   nullstream  the legacy default stream beside a blocking, a non-blocking
#          and the per-thread default stream (nullstream.cu), its host
#          buffer pageable and pinned
#   ranks  a data-parallel PyTorch job of four ranks on the one GPU (gloo),
#          one capture per rank as a job makes them (nsys profile -o
#          report.%q{RANK}), rank 2 loading from pageable memory and the
#          others with pin_memory=True
#   big    many-copies-600k and torch-long (not shipped), and
#          `nsys analyze -r cuda_memcpy_async:rows=-1` timed three times
# A pair's captures are made REPEATS times (default 3); the one whose
# program-reported time is the median is kept, the others' stdout stays
# under /tmp/cap/runs, and spread.txt says what each repeat measured.
# Every kept capture gets its SQLite export, the nsys stats CSV reports and
# NVIDIA's rule CSV; results are packed into $OUT as .tar.gz (OUT defaults
# to /tmp/cap/out).
# usage: source .device/nsys-env.sh && bash testdata/programs/capture-set.sh PHASE...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
CAP=/tmp/cap
SRC=$CAP/src
OUT=${OUT:-$CAP/out}
REPEATS=${REPEATS:-3}
REPORTS=cuda_api_sum,cuda_api_trace,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,cuda_gpu_trace,nvtx_pushpop_trace
NVCC=(nvcc -std=c++17 -O3 -lineinfo -arch=sm_90)
PY=$(command -v python3)
command -v nsys >/dev/null || { echo "capture-set: no nsys on PATH; source .device/nsys-env.sh first" >&2; exit 2; }
mkdir -p "$CAP/runs" "$OUT"

ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }

build() {
    rm -rf "$SRC" && mkdir -p "$SRC" && cp "$here"/*.cu "$here"/*.cuh "$here"/*.h "$here"/*.c "$here"/*.py "$SRC"/ || return 1
    (
        cd "$SRC" || exit 1
        for p in pipeline graph managed many_copies; do "${NVCC[@]}" -o $p $p.cu & done
        "${NVCC[@]}" -o driver driver.cu -L/usr/local/cuda/lib64/stubs -lcuda &
        nvcc -cubin -arch=sm_90 -o driver_kernel.cubin driver_kernel.cu &
        gcc -shared -fPIC -O2 -I/usr/local/cuda/include -o libcapnvtx.so nvtx_shim.c -ldl &
        wait
        ls pipeline graph managed many_copies driver driver_kernel.cubin libcapnvtx.so >/dev/null
    )
}

# Python programs run with the virtual environment's own python3, which finds
# its packages without PYTHONPATH: the capture's environment holds only what
# the wrapper keeps. JAX's compilation cache is filled outside nsys first
# (jax_loop.py --compile-cache), so the profiled runs start no ptxas.
JAXCACHE=$CAP/jax-cache
warm_jax() {
    "$PY" "$SRC/jax_loop.py" --steps 1 --warmups 1 --compile-cache "$JAXCACHE" >/dev/null &&
        "$PY" "$SRC/jax_loop.py" --pinned --steps 1 --warmups 1 --compile-cache "$JAXCACHE" >/dev/null
    echo "jax compilation cache: $(ls "$JAXCACHE" 2>/dev/null | wc -l) entries"
}

# processes NAME...: the processes each kept capture recorded (a check that
# no child process, such as ptxas, was recorded with its environment).
processes() {
    local n
    for n in "$@"; do
        echo "$n: $("$PY" -c "import sqlite3,sys; print(', '.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('select name from PROCESSES')))" "$CAP/$n/$n.sqlite")"
    done
}

# prof NAME TRACE [nsys flags...] -- PROGRAM [ARGS...]: one capture in /tmp/cap/NAME.
prof() {
    local name=$1 trace=$2 flags=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
    shift
    rm -rf "${CAP:?}/$name" && mkdir -p "$CAP/$name" && cd "$CAP/$name" || return 1
    local t0 sample=(-s none)
    # A phase that names its own sampling (call stacks need it) keeps it.
    case " ${flags[*]}" in *" -s "* | *" --sample="*) sample=() ;; esac
    t0=$(date +%s%N)
    nsys profile -t "$trace" "${sample[@]}" --cpuctxsw=none "${flags[@]}" -o "$name" "$@" >"$name.stdout.txt" 2>"$name.stderr.txt"
    local rc=$?
    echo "== $name rc=$rc $(ms_since "$t0") ms | $(grep -E ' median [0-9.]+ ms|^all [0-9]+ (steps|copies):' "$name.stdout.txt" | head -3 | paste -sd'|')"
    [ $rc = 0 ] || tail -5 "$name.stderr.txt"
    cd "$CAP" || return 1
}

# pair NAME METRIC TRACE [nsys flags...] -- PROGRAM...: REPEATS captures, the median kept.
# METRIC is the line the program's time is read from: a series label
# ("pass", "step": its median) or "all" (the "all N steps: X ms" line).
pair() {
    local name=$1 metric=$2 k
    shift 2
    for k in $(seq "$REPEATS"); do
        prof "$name" "$@"
        rm -rf "$CAP/runs/$name-r$k" && mv "$CAP/$name" "$CAP/runs/$name-r$k"
    done
    "$PY" - "$CAP" "$name" "$metric" "$REPEATS" <<'EOF' | tee -a "$CAP/spread.txt"
import os, re, shutil, statistics, sys
cap, name, metric, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
pat = re.compile(r"^all \d+ steps: ([\d.]+) ms" if metric == "all" else r"^" + re.escape(metric) + r" median ([\d.]+) ms", re.M)
vals = []
for k in range(1, reps + 1):
    text = open(f"{cap}/runs/{name}-r{k}/{name}.stdout.txt").read()
    m = pat.search(text)
    vals.append(float(m.group(1)) if m else float("nan"))
order = sorted(range(reps), key=lambda i: vals[i])
keep = order[(reps - 1) // 2] + 1
shutil.move(f"{cap}/runs/{name}-r{keep}", f"{cap}/{name}")
med = statistics.median(vals)
print(f"{name} ({metric}): " + ", ".join(f"r{i + 1} {v:.3f} ms" for i, v in enumerate(vals))
      + f"; kept r{keep}; spread {(max(vals) - min(vals)) / med * 100:.1f}% of the median")
EOF
}

# post NAME...: SQLite export, CSV reports and NVIDIA's rule for kept captures, in parallel.
post_one() {
    local n=$1
    cd "$CAP/$n" || return 1
    nsys export --type sqlite -o "$n.sqlite" "$n.nsys-rep" >export.log 2>&1 || echo "export rc=$? $n"
    nsys stats --report "$REPORTS" --format csv --output "$n" "$n.sqlite" >stats.log 2>&1 || echo "stats rc=$? $n"
    nsys analyze -r cuda_memcpy_async:rows=-1 --format csv -o "$n" "$n.sqlite" >analyze.log 2>&1 || echo "analyze rc=$? $n"
    # nsys names the output after the rule's arguments too; keep the plain name.
    [ -f "${n}_cuda_memcpy_async_rows=-1.csv" ] && mv "${n}_cuda_memcpy_async_rows=-1.csv" "${n}_cuda_memcpy_async.csv"
    rm -f ./*.qdstrm
    echo "-- $n: $(du -sh . | cut -f1), sqlite $(du -h "$n.sqlite" 2>/dev/null | cut -f1)"
}
post() {
    export -f post_one
    export CAP REPORTS
    local t0
    t0=$(date +%s%N)
    printf '%s\n' "$@" | xargs -P 6 -I{} bash -c 'post_one {}'
    echo "post-processing $# captures: $(ms_since "$t0") ms"
}

# pack FILE NAME...: the kept folders, the other repeats' stdout and spread.txt into $OUT/FILE.
pack() {
    local file=$1
    shift
    (
        cd "$CAP" || exit 1
        shopt -s nullglob
        tar czf "$OUT/$file" "$@" runs/*/*.stdout.txt runs/*/*.stderr.txt $([ -f spread.txt ] && echo spread.txt)
    )
    ls -la "$OUT/$file"
}

phase_build() {
    build && ls -la "$SRC"
}

phase_smoke() {
    nvidia-smi --query-gpu=name,compute_cap,pcie.link.gen.current,pcie.link.width.current,driver_version,memory.used --format=csv
    ls -la /usr/bin/time 2>&1; command -v sqlite3 xz gzip split
    local t0
    t0=$(date +%s%N)
    build || { echo "build failed"; return 1; }
    echo "build $(ms_since "$t0") ms"
    cd "$SRC" || return 1
    run() { local t=$(date +%s%N); "$@" >run.log 2>&1; echo "## rc=$? $(ms_since "$t") ms: $*"; tail -n 12 run.log; }
    run ./pipeline --passes 2
    run ./pipeline --pinned --passes 2
    run ./pipeline --mixed --total-mib 256 --passes 1
    run ./driver --module driver_kernel.cubin --steps 3
    run ./driver --module driver_kernel.cubin --pinned --steps 3
    run ./graph --launches 3 --eager 2
    run ./managed --mib 64 --rounds 1
    run ./many_copies --copies 8000
    run "$PY" -c 'import cupy.cuda.nvtx as n, jax; print("cupy nvtx available", n.available); d=jax.devices()[0]; print(d, [m.kind for m in d.addressable_memories()])'
    run "$PY" cupy_loop.py --steps 5
    run "$PY" cupy_loop.py --pinned --steps 5
    run "$PY" torch_prefetch.py --steps 20
    run "$PY" torch_prefetch.py --pinned --steps 20
    run "$PY" torch_long.py --steps 200
    run "$PY" jax_loop.py --steps 5
    run "$PY" jax_loop.py --pinned --steps 5
    cd "$CAP" || return 1
    prof smoke-managed cuda,nvtx --cuda-um-gpu-page-faults=true --cuda-um-cpu-page-faults=true -- "$SRC/managed" --mib 64 --rounds 1
    prof smoke-graph cuda,nvtx --cuda-graph-trace=node -- "$SRC/graph" --launches 3 --eager 2
    local n
    for n in smoke-managed smoke-graph; do
        t0=$(date +%s%N)
        (cd "$CAP/$n" && nsys export --type sqlite -o "$n.sqlite" "$n.nsys-rep" >/dev/null 2>&1)
        echo "export $n $(ms_since "$t0") ms"
        "$PY" - "$CAP/$n/$n.sqlite" <<'EOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for (t,) in db.execute("select name from sqlite_master where type='table' and (name like 'CUPTI%' or name like 'CUDA%' or name like 'NVTX%' or name = 'DIAGNOSTIC_EVENT') order by 1"):
    print(f"  {t}: {db.execute(f'select count(*) from {t}').fetchone()[0]}")
for row in db.execute("select copyKind, count(*), sum(bytes), sum(correlationId = 0) from CUPTI_ACTIVITY_KIND_MEMCPY group by 1"):
    print("  memcpy copyKind, n, bytes, uncorrelated:", row)
EOF
    done
}

phase_c() {
    build || { echo "build failed"; return 1; }
    pair pipeline-pageable pass cuda,nvtx -- "$SRC/pipeline"
    pair pipeline-pinned pass cuda,nvtx -- "$SRC/pipeline" --pinned
    pair driver-pageable step cuda,nvtx -- "$SRC/driver" --module "$SRC/driver_kernel.cubin"
    pair driver-pinned step cuda,nvtx -- "$SRC/driver" --module "$SRC/driver_kernel.cubin" --pinned
    prof mixed-buffers cuda,nvtx -- "$SRC/pipeline" --mixed --passes 4
    prof graph-whole cuda,nvtx -- "$SRC/graph"
    prof graph-node cuda,nvtx --cuda-graph-trace=node -- "$SRC/graph"
    prof managed cuda,nvtx --cuda-um-gpu-page-faults=true --cuda-um-cpu-page-faults=true -- "$SRC/managed"
    prof many-copies-small cuda,nvtx -- "$SRC/many_copies" --copies 20000
    local names=(pipeline-pageable pipeline-pinned driver-pageable driver-pinned mixed-buffers graph-whole graph-node managed many-copies-small)
    post "${names[@]}"
    pack c-captures.tar.gz "${names[@]}"
}

phase_py() {
    [ -x "$SRC/pipeline" ] || build || { echo "build failed"; return 1; }
    warm_jax
    pair cupy-pageable step cuda,nvtx -- "$PY" "$SRC/cupy_loop.py"
    pair cupy-pinned step cuda,nvtx -- "$PY" "$SRC/cupy_loop.py" --pinned
    pair torch-prefetch-pageable all cuda,nvtx -- "$PY" "$SRC/torch_prefetch.py"
    pair torch-prefetch-pinned all cuda,nvtx -- "$PY" "$SRC/torch_prefetch.py" --pinned
    prof jax-nvtx cuda,nvtx -- "$PY" "$SRC/jax_loop.py" --compile-cache "$JAXCACHE"
    prof jax-nvtx-compile cuda,nvtx -- "$PY" "$SRC/jax_loop.py"
    pair jax-cuda all cuda -- "$PY" "$SRC/jax_loop.py" --compile-cache "$JAXCACHE"
    pair jax-cuda-pinned all cuda -- "$PY" "$SRC/jax_loop.py" --pinned --compile-cache "$JAXCACHE"
    local names=(cupy-pageable cupy-pinned torch-prefetch-pageable torch-prefetch-pinned jax-nvtx jax-nvtx-compile jax-cuda jax-cuda-pinned)
    post "${names[@]}"
    processes "${names[@]}"
    pack py-captures.tar.gz "${names[@]}"
}

phase_predict() {
    build || { echo "build failed"; return 1; }
    local loader=("$PY" "$SRC/train_loader.py" --batch-size 128 --workers 4 --batches 60)
    pair train128-pageable step cuda,nvtx -- "${loader[@]}"
    pair train128-pinned step cuda,nvtx -- "${loader[@]}" --pin-memory
    pair torch-prefetch-pineach all cuda,nvtx -- "$PY" "$SRC/torch_prefetch.py" --pin-each
    local names=(train128-pageable train128-pinned torch-prefetch-pineach)
    post "${names[@]}"
    processes "${names[@]}"
    pack predict-captures.tar.gz "${names[@]}"
}

phase_predict48() {
    # Python alone: no CUDA program to build.
    mkdir -p "$SRC" && cp "$here"/*.py "$SRC"/ || return 1
    local prefetch=("$PY" "$SRC/torch_prefetch.py" --rows 12288)
    pair torch-prefetch48-pageable all cuda,nvtx -- "${prefetch[@]}"
    pair torch-prefetch48-pinned all cuda,nvtx -- "${prefetch[@]}" --pinned
    pair torch-prefetch48-pineach all cuda,nvtx -- "${prefetch[@]}" --pin-each
    local names=(torch-prefetch48-pageable torch-prefetch48-pinned torch-prefetch48-pineach)
    post "${names[@]}"
    processes "${names[@]}"
    pack predict48-captures.tar.gz "${names[@]}"
}

phase_nullstream() {
    # The legacy default stream's order: one CUDA program, built alone.
    mkdir -p "$SRC" && cp "$here"/nullstream.cu "$here"/*.h "$SRC"/ || return 1
    (cd "$SRC" && "${NVCC[@]}" -o nullstream nullstream.cu) || return 1
    pair nullstream-pageable blocking cuda,nvtx -- "$SRC/nullstream"
    pair nullstream-pinned blocking cuda,nvtx -- "$SRC/nullstream" --pinned
    local names=(nullstream-pageable nullstream-pinned)
    post "${names[@]}"
    processes "${names[@]}"
    pack nullstream-captures.tar.gz "${names[@]}"
}

phase_ranks() {
    mkdir -p "$SRC" && cp "$here"/*.py "$SRC"/ || return 1
    local dir=$CAP/ddp-ranks world=4 r t0
    rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || return 1
    # The ranks share one PID namespace of their own, as the wrapper gives
    # one program: a namespace per rank gives every rank's program the same
    # PID, and nsys's CUDA injection, keyed by it, then collects no CUDA
    # events at all. So the job runs the wrapper's real nsys itself, with
    # the wrapper's minimal environment plus the rendezvous; each nsys needs
    # a session name of its own (two at once are refused: "Session name
    # 'profile-1' is already in use"), and a rank whose nsys failed leaves
    # the others waiting at the rendezvous, hence a bound on each.
    local real=/tmp/nsys-layout/target-linux-x64/nsys
    [ -x "$real" ] || { echo "capture-set: no $real; source .device/nsys-env.sh first" >&2; return 1; }
    t0=$(date +%s%N)
    unshare --pid --fork --mount-proc env -i PATH=/tmp/nsys-layout/bin:/usr/local/cuda/bin:/usr/bin:/bin \
        "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" HOME=/tmp WORLD_SIZE=$world MASTER_ADDR=127.0.0.1 MASTER_PORT=29517 \
        GLOO_SOCKET_IFNAME=lo bash -c '
        real=$1 py=$2 src=$3 world=$4 bound=$5
        for r in $(seq 0 $((world - 1))); do
            RANK=$r timeout -k 10 "$bound" "$real" profile --session-new="rank$r" -t cuda,nvtx -s none --cpuctxsw=none \
                -o "report.%q{RANK}" "$py" "$src/train_ddp.py" --pinned-ranks 0,1,3 >"report.$r.stdout.txt" 2>"report.$r.stderr.txt" &
        done
        wait' _ "$real" "$PY" "$SRC" "$world" "${RANK_TIMEOUT:-240}"
    echo "== $world ranks $(ms_since "$t0") ms"
    for r in $(seq 0 $((world - 1))); do
        echo "rank $r: $(grep -E ' median [0-9.]+ ms|^rank ' "report.$r.stdout.txt" | paste -sd'|')"
        [ -f "report.$r.nsys-rep" ] || tail -5 "report.$r.stderr.txt"
    done
    for r in $(seq 0 $((world - 1))); do
        (
            n=report.$r
            nsys export --type sqlite -o "$n.sqlite" "$n.nsys-rep" >"$n.export.log" 2>&1 || echo "export rc=$? $n"
            nsys analyze -r cuda_memcpy_async:rows=-1 --format csv -o "$n" "$n.sqlite" >"$n.analyze.log" 2>&1 || echo "analyze rc=$? $n"
            [ -f "${n}_cuda_memcpy_async_rows=-1.csv" ] && mv "${n}_cuda_memcpy_async_rows=-1.csv" "${n}_cuda_memcpy_async.csv"
        ) &
    done
    wait
    rm -f ./*.qdstrm
    processes_in "$dir"/report.*.sqlite
    for r in $(seq 0 $((world - 1))); do
        echo "report.$r: $("$PY" -c "import sqlite3,sys; d=sqlite3.connect(sys.argv[1]); print([(t, d.execute(f'select count(*) from {t}').fetchone()[0]) for (t,) in d.execute(\"select name from sqlite_master where type='table' and name like 'CUPTI%'\")])" "report.$r.sqlite")"
    done
    cd "$CAP" && tar czf "$OUT/ranks-captures.tar.gz" ddp-ranks && ls -la "$OUT/ranks-captures.tar.gz"
}

# processes_in SQLITE...: the processes each capture recorded.
processes_in() {
    local f
    for f in "$@"; do
        echo "$(basename "$f"): $("$PY" -c "import sqlite3,sys; print(', '.join(r[0] for r in sqlite3.connect(sys.argv[1]).execute('select name from PROCESSES')))" "$f")"
    done
}

# time_analyze SQLITE: nsys analyze of the rule, three runs, wall and max RSS.
time_analyze() {
    local db=$1 i
    for i in 1 2 3; do
        rm -f "rule$i"_*.csv
        if [ -x /usr/bin/time ]; then
            /usr/bin/time -v nsys analyze -r cuda_memcpy_async:rows=-1 --format csv -o "rule$i" "$db" >/dev/null 2>"time$i.txt"
            echo "analyze run $i rc=$?: $(grep -E 'Elapsed \(wall|Maximum resident' "time$i.txt" | sed 's/^\s*//' | paste -sd';')"
        else
            "$PY" - "$db" "$i" <<'EOF'
import resource, subprocess, sys, time
t = time.perf_counter()
rc = subprocess.run(["nsys", "analyze", "-r", "cuda_memcpy_async:rows=-1", "--format", "csv", "-o", f"rule{sys.argv[2]}", sys.argv[1]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(f"analyze run {sys.argv[2]} rc={rc}: wall {time.perf_counter() - t:.2f} s; max RSS {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB (getrusage of children)")
EOF
        fi
    done
    ls -la rule*_cuda_memcpy_async*.csv 2>/dev/null | head -3
    wc -l rule1_cuda_memcpy_async*.csv 2>/dev/null
    rm -f rule*_cuda_memcpy_async*.csv
}

phase_bt() {
    build || { echo "build failed"; return 1; }
    # nsys collects CUDA call stacks only with CPU sampling on; a 10 us
    # threshold takes every copy call that waited on a staged copy.
    local bt=(--sample=process-tree --cudabacktrace=all:10000)
    prof torch-prefetch-backtrace cuda,nvtx "${bt[@]}" --python-backtrace=cuda -- "$PY" "$SRC/torch_prefetch.py"
    prof pipeline-backtrace cuda,nvtx "${bt[@]}" -- "$SRC/pipeline" --passes 2
    post torch-prefetch-backtrace pipeline-backtrace
    pack bt-captures.tar.gz torch-prefetch-backtrace pipeline-backtrace
}

# pack_big ARCHIVE DIR FILES...: files of a big capture into $OUT/ARCHIVE.tar.xz
# (gzip where xz is missing), split in 15 MiB parts where larger.
pack_big() {
    local archive=$1 dir=$2 f
    shift 2
    if command -v xz >/dev/null; then
        f=$OUT/$archive.tar.xz
        (cd "$dir" && tar cf - "$@" | xz -T0 -6 >"$f")
    else
        f=$OUT/$archive.tar.gz
        (cd "$dir" && tar czf "$f" "$@")
    fi
    if [ "$(stat -c %s "$f")" -gt $((15 * 1024 * 1024)) ]; then
        split -b 15m -d "$f" "$f.part" && rm "$f"
    fi
}

phase_big() {
    [ -x "$SRC/many_copies" ] || build || { echo "build failed"; return 1; }
    local t0 n=many-copies-600k
    prof $n cuda,nvtx -- "$SRC/many_copies" --copies 600000
    cd "$CAP/$n" || return 1
    t0=$(date +%s%N)
    nsys export --type sqlite -o $n.sqlite $n.nsys-rep >export.log 2>&1
    echo "export $n rc=$? $(ms_since "$t0") ms; $(ls -la $n.nsys-rep $n.sqlite | awk '{print $5, $9}' | paste -sd' ')"
    time_analyze $n.sqlite | tee analyze-timing.txt
    nproc
    rm -f ./*.qdstrm
    pack_big $n-rep "$CAP/$n" $n.nsys-rep $n.stdout.txt $n.stderr.txt analyze-timing.txt export.log
    pack_big $n-sqlite "$CAP/$n" $n.sqlite
    n=torch-long
    cd "$CAP" || return 1
    prof $n cuda,nvtx -- "$PY" "$SRC/torch_long.py"
    cd "$CAP/$n" || return 1
    t0=$(date +%s%N)
    nsys export --type sqlite -o $n.sqlite $n.nsys-rep >export.log 2>&1
    echo "export $n rc=$? $(ms_since "$t0") ms; $(ls -la $n.nsys-rep $n.sqlite | awk '{print $5, $9}' | paste -sd' ')"
    "$PY" -c "import sqlite3;d=sqlite3.connect('$n.sqlite');print('api calls', d.execute('select count(*) from CUPTI_ACTIVITY_KIND_RUNTIME').fetchone()[0], 'kernels', d.execute('select count(*) from CUPTI_ACTIVITY_KIND_KERNEL').fetchone()[0], 'copies', d.execute('select count(*) from CUPTI_ACTIVITY_KIND_MEMCPY').fetchone()[0])"
    rm -f ./*.qdstrm
    pack_big $n-rep "$CAP/$n" $n.nsys-rep $n.stdout.txt $n.stderr.txt export.log
    pack_big $n-sqlite "$CAP/$n" $n.sqlite
    # What comes back is bounded (64 MiB, 8 files): the long run's export goes first.
    if [ "$(du -cb "$OUT"/* | tail -1 | cut -f1)" -gt $((62 * 1024 * 1024)) ] || [ "$(ls "$OUT" | wc -l)" -gt 8 ]; then
        echo "over what comes back: leaving out the $n export"
        rm -f "$OUT/$n-sqlite".tar.*
    fi
    ls -la "$OUT"
}

for phase in "$@"; do
    echo "#### phase $phase"
    t=$(date +%s%N)
    "phase_$phase"
    echo "#### phase $phase done in $(ms_since "$t") ms"
done
