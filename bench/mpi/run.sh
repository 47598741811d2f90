#!/usr/bin/env bash
# The MPI transport side by side with the shared-memory transport, in one run (bench/RESULTS.md,
# "MPI transport"): allreduce of 1 KiB .. MAX f32 on 2 and 4 ranks and a notify/wait round trip,
# over shared windows, over one-sided windows, and over Open MPI's UCX components on TCP (the
# path that crosses hosts), each against MPI_Allreduce (and an MPI ping-pong) of the same data;
# the shared-memory transport (forked chips) against memcpy.
#   bench/mpi/run.sh [BUILD_DIR] [MAX_BYTES] [REPS]    (default build-mpi, 64 MiB, 10)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-build-mpi}
MAX=${2:-67108864}
REPS=${3:-10}
export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1} OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
MPIRUN=(mpirun --oversubscribe --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
UCX=(OMPI_MCA_osc=ucx OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any
  UCX_TLS=tcp,self UCX_NET_DEVICES=lo UCX_WARN_UNUSED_ENV_VARS=n)
echo "== $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores, $(mpirun --version | head -1)"
for np in 2 4; do
  echo
  echo "== $np ranks: shared-memory transport (forked chips) vs memcpy"
  "$B/bench/runtime/dist_allreduce" "$np" "$MAX" "$REPS"
  echo
  echo "== $np ranks: MPI transport, shared windows, vs MPI_Allreduce"
  "${MPIRUN[@]}" -np "$np" "$B/bench/mpi/mpi_allreduce" "$MAX" "$REPS"
  echo
  echo "== $np ranks: MPI transport, one-sided windows (PTO_MPI_WINDOWS=separate), vs MPI_Allreduce"
  "${MPIRUN[@]}" -np "$np" -x PTO_MPI_WINDOWS=separate "$B/bench/mpi/mpi_allreduce" "$MAX" "$REPS"
  echo
  echo "== $np ranks: MPI transport over UCX on TCP (the cross-host path), vs MPI_Allreduce (4 MiB at most)"
  env "${UCX[@]}" "${MPIRUN[@]}" -np "$np" "$B/bench/mpi/mpi_allreduce" $((MAX < 4194304 ? MAX : 4194304)) 3
done
