"""Kills one rank of an MPI job with SIGKILL in the middle of its run.

Usage: kill_rank.py RANK DELAY_S MPIRUN_ARGS...  Starts the job (marked with a
unique environment variable), waits for the process of MPI rank RANK to appear
(up to 60 s: a loaded machine starts jobs slowly), lets it run DELAY_S seconds,
kills it, then waits for the launcher. Prints the launcher's exit code, the
seconds from the kill to the end of the job, whether any process of the job is
left, and the launcher's output.
"""
import os
import signal
import subprocess
import sys
import time


def job_processes(marker):
    """pid -> MPI rank of every live process carrying `marker`."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if env.get(b"TP_FAULT_MARKER") == marker and state != "Z" \
                and b"OMPI_COMM_WORLD_RANK" in env:
            found[int(pid)] = int(env[b"OMPI_COMM_WORLD_RANK"])
    return found


def main():
    rank, delay, cmd = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    marker = ("tp-%d-%d" % (os.getpid(), time.time_ns())).encode()
    env = dict(os.environ, TP_FAULT_MARKER=marker.decode())
    job = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
    victims = []
    deadline = time.time() + 60
    while not victims and time.time() < deadline and job.poll() is None:
        time.sleep(0.1)
        victims = [pid for pid, r in job_processes(marker).items() if r == rank]
    time.sleep(delay)
    if not victims or job.poll() is not None:
        out = job.communicate(timeout=60)[0].decode(errors="replace")
        print("kill_rank: no process of rank %d found (job ended? rc %s)\n%s"
              % (rank, job.returncode, out))
        return 1
    os.kill(victims[0], signal.SIGKILL)
    killed = time.time()
    try:
        out = job.communicate(timeout=60)[0].decode(errors="replace")
    except subprocess.TimeoutExpired:
        job.kill()
        out = job.communicate()[0].decode(errors="replace")
    seconds = time.time() - killed
    time.sleep(0.5)
    left = job_processes(marker)
    print("exit code %d" % job.returncode)
    print("stopped within 10 s: %s (%.1f s)" % ("yes" if seconds < 10 else "no", seconds))
    print("processes left: %d" % len(left))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
