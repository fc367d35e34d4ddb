#!/bin/sh
# The container's entry (Dockerfile). Started as root only to hand the container's own cgroup
# to the bot's user, then the bot runs as that user: with a cgroup v2 namespace of its own,
# mounted read-write (docker run --cgroupns=private --privileged; podman run
# --cgroupns=private --security-opt unmask=/sys/fs/cgroup), the bot can then give each shell
# command a memory cgroup of its own (src/sandbox/cgroup-v2.ts), as systemd's Delegate=yes
# would. Where the cgroup file system is read-only (docker's default), nothing is handed over
# and the bot's start-up line says the memory cap is per process. Started as another user
# already (docker run --user), it runs the bot as it is.
set -eu
user="${BOT_USER:-bot}"
cgroup="${CHAT_AGENT_CGROUP_ROOT:-/sys/fs/cgroup}"
if [ "$(id -u)" != 0 ]; then
  exec "$@"
fi
# What systemd hands over with Delegate=yes: the folder, and the files that move processes and give controllers.
if [ -f "$cgroup/cgroup.controllers" ] && [ -w "$cgroup/cgroup.procs" ]; then
  for file in "$cgroup" "$cgroup/cgroup.procs" "$cgroup/cgroup.subtree_control" "$cgroup/cgroup.threads"; do
    if [ -e "$file" ]; then chown "$(id -u "$user"):$(id -g "$user")" "$file" || true; fi
  done
fi
exec setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups --inh-caps=-all -- "$@"
