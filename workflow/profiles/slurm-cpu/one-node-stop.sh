#!/bin/bash
# Stop the cluster that one-node.sh DIR started: its daemons by their PIDs, then the
# /etc/slurm/slurm.conf link (only if it points to DIR's config) and /etc/slurm (only
# if one-node.sh created it and it is empty). Jobs still running are killed with slurmd.
D=${1:?usage: one-node-stop.sh DIR}
D=$(cd "$D" 2>/dev/null && pwd) || exit 0
# both asked to stop at once (each takes 1-2 s to shut down), then each waited for
pids=()
for f in slurmd slurmctld; do
    [ -s "$D/$f.pid" ] && pid=$(cat "$D/$f.pid") && kill "$pid" 2>/dev/null && pids+=("$pid")
done
for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
done
rm -f "$D/slurmd.pid" "$D/slurmctld.pid"
[ "$(readlink /etc/slurm/slurm.conf)" = "$D/etc/slurm.conf" ] && rm -f /etc/slurm/slurm.conf
[ -e "$D/created-etc-slurm" ] && rmdir /etc/slurm 2>/dev/null && rm -f "$D/created-etc-slurm"
true
