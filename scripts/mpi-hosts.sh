#!/usr/bin/env bash
# Two hosts on this machine, for real: each a network namespace (and its own
# hostname), joined by a veth pair (10.77.0.1 and 10.77.0.2), so that MPI
# between them goes over TCP as between two machines. Runs COMMAND on 4 ranks,
# 2 a host, with mpirun started on the first host and OpenMPI's remote launch
# agent entering the second one (where a cluster would use ssh); first prints
# where each rank runs. Needs root (ip netns); removes what it made on exit.
#
#   scripts/mpi-hosts.sh check            # can this machine make the hosts?
#   scripts/mpi-hosts.sh run COMMAND...   # e.g. run build/bin/tp-run m.so --random-inputs --verify
set -uo pipefail

mode=${1:-}
shift || true
id=$$
hostA=tph${id}a hostB=tph${id}b

cleanup() {
  ip netns del "$hostA" 2>/dev/null
  ip netns del "$hostB" 2>/dev/null
  [ -n "${dir:-}" ] && rm -rf "$dir"
}

make_hosts() {
  ip netns add "$hostA" && ip netns add "$hostB" &&
    ip link add "tpv${id}a" type veth peer name "tpv${id}b" &&
    ip link set "tpv${id}a" netns "$hostA" && ip link set "tpv${id}b" netns "$hostB" &&
    ip -n "$hostA" addr add 10.77.0.1/24 dev "tpv${id}a" &&
    ip -n "$hostB" addr add 10.77.0.2/24 dev "tpv${id}b" &&
    ip -n "$hostA" link set lo up && ip -n "$hostA" link set "tpv${id}a" up &&
    ip -n "$hostB" link set lo up && ip -n "$hostB" link set "tpv${id}b" up
}

case $mode in
check)
  trap cleanup EXIT
  if ! command -v ip >/dev/null || ! command -v unshare >/dev/null; then
    echo "mpi-hosts: no ip or unshare (iproute2, util-linux)"
    exit 1
  fi
  if ! out=$(make_hosts 2>&1); then
    echo "mpi-hosts: cannot make network namespaces here: $out"
    exit 1
  fi
  echo "mpi-hosts: network namespaces can be made"
  ;;
run)
  [ $# -gt 0 ] || { echo "usage: scripts/mpi-hosts.sh run COMMAND..." >&2; exit 2; }
  trap cleanup EXIT
  make_hosts || { echo "mpi-hosts: cannot make the hosts" >&2; exit 2; }
  dir=$(mktemp -d)
  printf "10.77.0.1 slots=2\n10.77.0.2 slots=2\n" > "$dir/hosts"
  # The launch agent: "ssh" into a host is entering its namespace, with the
  # host's own hostname (OpenMPI tells nodes apart by name).
  cat > "$dir/agent" <<AGENT
#!/bin/sh
case \$1 in
  10.77.0.1) ns=$hostA ;;
  10.77.0.2) ns=$hostB ;;
  *) echo "mpi-hosts: unknown host \$1" >&2; exit 1 ;;
esac
shift
exec ip netns exec \$ns unshare --uts sh -c "hostname \$ns; \$*"
AGENT
  chmod +x "$dir/agent"
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Under the sanitizers, OpenMPI's own leaks and its TCP transport's lock
  # order are not the project's (scripts/tsan.supp, unless TSAN_OPTIONS names
  # a suppressions file already, as scripts/sanitize.sh does).
  export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
  if [ -n "${TSAN_OPTIONS:-}" ] && [[ $TSAN_OPTIONS != *suppressions=* ]]; then
    export TSAN_OPTIONS="$TSAN_OPTIONS:suppressions=$(cd "$(dirname "$0")" && pwd)/tsan.supp"
  fi
  mpirun=(mpirun --hostfile "$dir/hosts" -np 4
          --mca plm_rsh_agent "$dir/agent"
          --mca btl self,vader,tcp --mca btl_vader_single_copy_mechanism none
          --mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24)
  in_host_a() {
    ip netns exec "$hostA" unshare --uts sh -c 'hostname "$0"; exec "$@"' "$hostA" "$@"
  }
  in_host_a "${mpirun[@]}" sh -c \
    'echo "mpi-hosts: rank $OMPI_COMM_WORLD_RANK on host $(hostname | sed "s/^tph[0-9]*//")"' |
    sort
  in_host_a "${mpirun[@]}" "$@"
  ;;
*)
  echo "usage: scripts/mpi-hosts.sh check | run COMMAND..." >&2
  exit 2
  ;;
esac
