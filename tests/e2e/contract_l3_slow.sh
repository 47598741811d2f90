#!/usr/bin/env bash
# The L3 contract sweep of contract_l3.sh (tests/e2e/data/contract_l3.py) with its longer part
# (PTO_CONTRACT_L3_SLOW=1: the collectives of more dtypes on 2 and 4 ranks), on forked chips and
# chips as threads, and, in a build with the MPI transport where mpirun is installed, every case
# once more under mpirun (--transport mpi, one rank per device): the contract says MPI behaves
# as one host's shared memory does.
source "$(dirname "$0")/lib/contract.bash"
export PTO_CONTRACT_L3_SLOW=1
CASES="$PTO_SOURCE_DIR/tests/e2e/data/contract_l3.py"
for chips in processes threads; do
  PTO_DIST_CHIPS=$chips run_contract "$CASES"
done
if grep -q 'mpi' <<<"$("$PTO" --version)" && command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # CI containers run as root
  # Everything on loopback; every run's life bounded by timeout.
  PTO_CONTRACT_MPIRUN="timeout 300 mpirun --oversubscribe --mca btl_tcp_if_include lo"
  PTO_CONTRACT_MPIRUN+=" --mca oob_tcp_if_include lo -x PTO_CACHE_DIR"
  PTO_CONTRACT_MPIRUN=$PTO_CONTRACT_MPIRUN run_contract "$CASES"
else
  echo "note: no MPI transport in this pto (or no mpirun): the MPI pass is left out"
fi
finish
