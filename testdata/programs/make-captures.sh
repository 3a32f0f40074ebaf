#!/usr/bin/env bash
# Make real captures of programs that follow the lesson (for structure) and of
# a DataLoader training loop (for audit). Run on the GPU machine from the repo root.
set -uo pipefail
repo=$(pwd)
command -v nsys >/dev/null || source .device/nsys-env.sh >/dev/null
PY=$(command -v python3)
REPORTS=cuda_api_sum,cuda_api_trace,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,cuda_gpu_trace,nvtx_pushpop_trace
nvidia-smi --query-gpu=name,compute_cap,pcie.link.gen.max,pcie.link.width.max,driver_version --format=csv
mkdir -p /tmp/cap/src && cd /tmp/cap
cp "$repo"/testdata/programs/* src/
bash src/variants.sh "$repo/kernels/pinned.cu" src
( cd src && nvcc -std=c++17 -O3 -lineinfo -arch=sm_90 -o other-counts other-counts.cu && nvcc -std=c++17 -O3 -lineinfo -arch=sm_90 -o broken-pin broken-pin.cu ) || exit 1
cap() { # name cmd...
  local name=$1; shift
  mkdir -p /tmp/cap/$name && cd /tmp/cap/$name
  nsys profile -t cuda,nvtx -s none --cpuctxsw=none -o $name "$@" > $name.transcript.txt 2>&1
  echo "== $name profile rc=$?"
  nsys export --type sqlite -o $name.sqlite $name.nsys-rep > /dev/null 2>&1 || echo "export failed $name"
  nsys stats --report $REPORTS --format csv --output $name --force-export true $name.nsys-rep > stats.log 2>&1 || echo "stats rc=$? $name"
  nsys analyze -r cuda_memcpy_async:rows=-1 --format csv -o $name $name.sqlite > analyze.log 2>&1 || { echo "analyze rows=-1 failed; plain"; nsys analyze -r cuda_memcpy_async --format csv -o $name $name.sqlite >> analyze.log 2>&1; }
  # nsys names the output after the rule's arguments too; keep the plain name.
  [ -f ${name}_cuda_memcpy_async_rows=-1.csv ] && mv ${name}_cuda_memcpy_async_rows=-1.csv ${name}_cuda_memcpy_async.csv
  tail -5 $name.transcript.txt; ls -la
  cd /tmp/cap
}
cap other-counts /tmp/cap/src/other-counts --json other-counts.results.json
cap broken-pin /tmp/cap/src/broken-pin --json broken-pin.results.json
cap torch-lesson $PY /tmp/cap/src/torch_lesson.py
cap train-pageable $PY /tmp/cap/src/train_loader.py
cap train-pinned $PY /tmp/cap/src/train_loader.py --pin-memory
# New CSV reports for the shipped captures of our own program.
for d in h200-pinned h200-pinned-nonvtx h200-run; do
  mkdir -p /tmp/cap/shipped/$d && cp "$repo/testdata/captures/$d/pinned.nsys-rep" /tmp/cap/shipped/$d/
  ( cd /tmp/cap/shipped/$d && nsys stats --report cuda_gpu_trace,nvtx_pushpop_trace --format csv --output pinned --force-export true pinned.nsys-rep > stats.log 2>&1; rm -f pinned.nsys-rep pinned.sqlite; ls )
done
cd /tmp/cap && rm -rf src/other-counts src/broken-pin
tar czf $OUT/captures.tgz --exclude='*.qdstrm' other-counts broken-pin torch-lesson train-pageable train-pinned shipped src
ls -la $OUT
